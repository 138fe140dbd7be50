/// Another server holds the journal: two servers on one file would both hand out the
/// same fences, so the second one does not start (exit 1).
public struct JournalInUse: Error, CustomStringConvertible {
    public var path: String
    public var lockPath: String
    /// The holder's process id as its lock file says; nil if it has not written it yet.
    public var pid: Int32?

    public var description: String {
        let holder = pid.map { "process \($0)" } ?? "another process"
        return "journal \(path) is in use by \(holder) (it holds the lock on \(lockPath)); "
            + "stop that server first, or give this one another --journal"
    }
}
