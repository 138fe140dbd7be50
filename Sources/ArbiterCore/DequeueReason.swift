/// Why a session left a queue without being granted; the `reason=` of DEQUEUED.
public enum DequeueReason: String, Sendable, CaseIterable {
    case up, cancel, disconnect, leave, reset, shutdown
    /// Cluster mode: the term whose leader kept the line ended, and the line with it. Told
    /// to each waiter by its own node, with no `seq` (docs/CLUSTER.md); never journaled.
    case failover
}
