import ArbiterCore

/// What /metrics and /api/hooks show of one hook, updated on its queue.
public struct HookStats: Sendable {
    public var delivered = 0
    /// Attempts that failed and were retried later.
    public var retried = 0
    /// Dropped at once for a status no retry changes.
    public var rejected = 0
    /// Dropped after `max_age_s` of retries.
    public var expired = 0
    /// Dropped at once because `max_pending` were waiting.
    public var overflowed = 0
    public var pending = 0
    public var lastSuccessWallMs: Int64?
    public var lastFailureWallMs: Int64?
    public var lastFailureReason: String?
    /// From the event's decision to the receiver's 2xx, retries included.
    public var latency = LatencyHistogram()

    public init() {}
}
