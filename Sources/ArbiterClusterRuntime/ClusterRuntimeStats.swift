/// What the runtime counts, for logs, `/metrics` and the cluster check.
public struct ClusterRuntimeStats: Equatable, Sendable {
    public var keepAlivesSent = 0
    public var keepAlivesAnswered = 0
    public var keepAlivesFailed = 0
    /// The longest time between two keepalives sent while a lease was held.
    public var longestKeepAliveGapMilliseconds: Int64 = 0
    /// The longest time between the sends of two *answered* keepalives (or the grant and
    /// the first): how much of the safe window (TTL minus margin) an etcd hiccup used up.
    /// Past the window, the leader stepped down.
    public var longestRenewalGapMilliseconds: Int64 = 0
    /// The longest a control step (ranges, campaigns, fence reservations) took.
    public var longestStepMilliseconds: Int64 = 0
    public var steps = 0
    /// Step-downs by reason, as reported to `stopDeciding`.
    public var stepDowns: [String: Int] = [:]

    public init() {}
}
