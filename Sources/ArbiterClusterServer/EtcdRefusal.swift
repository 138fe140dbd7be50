/// What an operator can do about an error etcd answered with (it answered: it is up, and
/// refuses), for the messages that report one.
enum EtcdRefusal {
    /// The next step for what etcd said, when one is known.
    static func whatToDo(_ problem: String) -> String? {
        if problem.contains("database space exceeded") {
            return "etcd is out of space (its NOSPACE alarm is raised): compact and defragment it (etcdctl compact, etcdctl defrag), "
                + "then etcdctl alarm disarm; run etcd with --auto-compaction-mode periodic --auto-compaction-retention 1h (README)"
        }
        return nil
    }
}
