import Dispatch

/// Where the cluster's own short timed jobs run (a lapse look, a link's grace, a retry).
/// A serial queue of its own, never `DispatchQueue.global()`: on Linux that pool hardly
/// grows while its threads are blocked (a hung etcd call, a slow receiver), and a 10 ms
/// timer there fired 1.9 s late behind 4 blocked jobs; a serial queue's did not.
enum ClusterTimers {
    static let queue = DispatchQueue(label: "arbiter.cluster.timers")
}
