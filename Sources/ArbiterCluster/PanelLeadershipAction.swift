/// What `PanelLeadershipStateMachine` asks its driver to do.
public enum PanelLeadershipAction: Equatable, Sendable {
    /// Create the election key under the node's lease, iff it does not exist.
    case campaign
    /// Reserve the next fence block with a transaction guarded by `term`.
    case reserveFences(term: Int64)
    /// The panel's core may run from now on, handing out fences from the block.
    case startDeciding(FenceBlock)
    /// More fences for the running core, in the same term.
    case extendFences(FenceBlock)
    /// Stop the core now: every grant of `term` ends with `reason=failover`.
    case stopDeciding(term: Int64, reason: StepDownReason)
    /// Delete the election key, iff its create revision is still `term`.
    case resign(term: Int64)
    /// The leader to relay to changed (nil: none known).
    case follow(LeaderInfo?)
}
