import ArbiterCore

/// `ClusterRuntime.writableLeaseID`'s fast path, held apart from the runtime: asked at
/// every write in cluster mode, through the runtime it cost a retain and a release of an
/// object with weak references (the runtime's slow path), about 370 instructions a write
/// on a leader's node (callgrind). This holds only what the answer needs, none of which
/// is weakly referenced.
public final class WritableLease: Sendable {
    private let published: PublishedLease
    private let clock: @Sendable () -> Instant
    private let slack: Int64

    init(published: PublishedLease, clock: @escaping @Sendable () -> Instant, slackMilliseconds: Int64) {
        self.published = published
        self.clock = clock
        self.slack = slackMilliseconds
    }

    /// The lease whose decisions may still be written (`.some(nil)`: none), or nil when a
    /// publication was under way: then ask `ClusterRuntime.writableLeaseID`.
    public func read() -> Int64?? {
        guard let lease = published.read() else { return nil }
        return .some(clock() < lease.safeUntil + slack ? lease.id : nil)
    }
}
