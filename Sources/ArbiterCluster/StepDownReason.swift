/// Why a leader stopped deciding. Every one ends the term's grants with `reason=failover`.
public enum StepDownReason: Equatable, Sendable {
    /// The safe deadline passed: keepalives went unanswered, or the node was paused.
    case leaseDeadline
    /// etcd said the lease is gone.
    case leaseLost
    /// The election key is no longer ours (observed, or a term-guarded txn failed).
    case deposed
    /// Shedding a panel so the nodes share them out.
    case rebalance
    case shutdown
}
