import ArbiterCore

/// The lease arithmetic every node uses. A leader may decide until its *safe deadline*:
///
///     safeUntil = sentAt + grantedTTL - margin
///
/// where `sentAt` is the node's monotonic clock read *before* the grant or keepalive request
/// was sent. etcd starts (or restarts) the TTL when it handles the request, which is after
/// `sentAt`, and never expires a lease early (a new etcd leader even extends every lease),
/// so at `sentAt + TTL` the lease is certainly still alive. The margin covers what that
/// argument leaves out: the two clocks running at slightly different rates, and the time
/// between the node checking the deadline and the decision reaching anyone.
public struct ClusterTiming: Equatable, Sendable {
    /// The TTL asked of etcd (`--cluster-ttl`); etcd may grant more, never less.
    public var ttlSeconds: Int64
    /// How often a keepalive is sent.
    public var keepAliveIntervalMilliseconds: Int64
    public var safetyMarginMilliseconds: Int64
    /// Panels a node may lead beyond its fair share, ceil(P/N): without it, nodes that
    /// come up one after another shed and take panels back and forth.
    public var spreadSlack: Int

    public init(ttlSeconds: Int64 = 3, keepAliveIntervalMilliseconds: Int64 = 500, safetyMarginMilliseconds: Int64 = 500, spreadSlack: Int = 1) {
        self.ttlSeconds = ttlSeconds
        self.keepAliveIntervalMilliseconds = keepAliveIntervalMilliseconds
        self.safetyMarginMilliseconds = safetyMarginMilliseconds
        self.spreadSlack = spreadSlack
    }

    public static let standard = ClusterTiming()

    /// The last instant a leader whose latest answered grant or keepalive was sent at
    /// `sentAt`, and granted `ttlSeconds`, may still decide.
    public func safeDeadline(sentAt: Instant, grantedTTLSeconds: Int64) -> Instant {
        sentAt + (grantedTTLSeconds * 1000 - safetyMarginMilliseconds)
    }

    /// Nil if the numbers are usable, else why not: a margin that eats the whole TTL, or
    /// keepalives too rare to renew the lease before the deadline.
    public var problem: String? {
        if ttlSeconds < 1 { return "the lease TTL must be at least 1 s" }
        if safetyMarginMilliseconds < 0 { return "the safety margin cannot be negative" }
        if safetyMarginMilliseconds >= ttlSeconds * 1000 { return "the safety margin must be shorter than the TTL" }
        if keepAliveIntervalMilliseconds < 1 || keepAliveIntervalMilliseconds * 2 > ttlSeconds * 1000 - safetyMarginMilliseconds {
            return "keepalives must be sent at least twice within TTL minus the margin"
        }
        return nil
    }
}
