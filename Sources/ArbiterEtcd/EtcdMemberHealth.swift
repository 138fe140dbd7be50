import ArbiterIO

/// What a node's etcd clients have lately seen of each member, shared by all of them: the
/// lease's keepalives, the steps' reads and transactions, and the watch.
///
/// A member that is killed refuses connections, and every client moves on at once. A
/// member that is frozen (SIGSTOP, a VM paused, a black-holed network path) still
/// accepts them, since the kernel completes the handshake, and then says nothing: each
/// call to it waits out its whole timeout. Keepalives go out every 500 ms, so without
/// this every one of them would go to that member for the 2 s it takes the first to
/// time out, and the lease's safe window (TTL minus the margin, 2.5 s by default) would
/// run out on a healthy etcd. So a member with a call unanswered for `stallMilliseconds`,
/// or one whose call failed in the last `failureMemoryMilliseconds`, is *suspect*, and
/// calls try every other member first.
public final class EtcdMemberHealth: @unchecked Sendable {
    /// Longer than any answer from a member that is alive: a keepalive is answered by
    /// etcd's leader without a disk write, a range or transaction within milliseconds to
    /// tens of milliseconds. While etcd elects a leader every member is slow at once;
    /// then all are suspect, and the order is the usual one.
    public static let stallMilliseconds: Int64 = 300
    /// How long a member that failed a call stays behind the others, unless it answers.
    public static let failureMemoryMilliseconds: Int64 = 5_000

    public let members: Int
    private let clock: any TimeSource
    /// Every caller's thread shares it: the lock's value.
    private let calls: Locked<Calls>

    /// The calls under way and each member's last failure.
    struct Calls {
        var startedAt: [Int: (member: Int, at: Int64)] = [:]
        var nextCall = 0
        var failedAt: [Int64?]

        /// 0: nothing against it; 1: a call failed lately; 2: a call is stalled on it now.
        func rank(_ member: Int, at: Int64) -> Int {
            if startedAt.values.contains(where: { $0.member == member && at - $0.at >= EtcdMemberHealth.stallMilliseconds }) { return 2 }
            if let failed = failedAt[member], at - failed < EtcdMemberHealth.failureMemoryMilliseconds { return 1 }
            return 0
        }
    }

    /// `clock`: a manual one in tests.
    public init(members: Int, clock: any TimeSource = SystemClock.monotonic) {
        precondition(members > 0, "at least one etcd member")
        self.members = members
        self.clock = clock
        self.calls = Locked(Calls(failedAt: Array(repeating: nil, count: members)))
    }

    /// A call to `member` is under way (connected; its request about to be sent). Returns
    /// the token `ended` takes.
    public func began(_ member: Int) -> Int {
        let at = clock.milliseconds()
        return calls.withLock { c in
            c.nextCall += 1
            c.startedAt[c.nextCall] = (member, at)
            return c.nextCall
        }
    }

    /// The call is over: `answered` when the member answered at all (an error from etcd,
    /// such as "no leader", is an answer: the member is alive), false when it timed out or
    /// the connection broke.
    public func ended(_ call: Int, answered: Bool) {
        let at = clock.milliseconds()
        calls.withLock { c in
            guard let (member, _) = c.startedAt.removeValue(forKey: call) else { return }
            c.failedAt[member] = answered ? nil : at
        }
    }

    /// A connection to `member` failed: nothing was sent.
    public func unreachable(_ member: Int) {
        let at = clock.milliseconds()
        calls.withLock { c in c.failedAt[member] = at }
    }

    public func isSuspect(_ member: Int) -> Bool {
        let at = clock.milliseconds()
        return calls.withLock { c in c.rank(member, at: at) > 0 }
    }

    /// Every member, starting at `preferred` and going round: those not suspect first,
    /// then those that only failed a while ago, then those with a call stalled now. A
    /// failure remembered from an outage that is over must not send calls back to the
    /// member that is frozen now.
    public func order(from preferred: Int) -> [Int] {
        let at = clock.milliseconds()
        return calls.withLock { c in
            let ring = (0..<c.failedAt.count).map { (preferred + $0) % c.failedAt.count }
            let ranks = ring.map { c.rank($0, at: at) }
            // By rank, then by place in the ring (`sorted` is not stable).
            return ring.indices.sorted { (ranks[$0], $0) < (ranks[$1], $1) }.map { ring[$0] }
        }
    }

    /// Whether a long-lived call on `member` (the watch) should go elsewhere: it is
    /// suspect and some other member is less so. When all are alike (etcd electing a
    /// leader, or without a majority) moving would gain nothing.
    public func shouldLeave(_ member: Int) -> Bool {
        let at = clock.milliseconds()
        return calls.withLock { c in
            let own = c.rank(member, at: at)
            guard own > 0 else { return false }
            return (0..<c.failedAt.count).contains { $0 != member && c.rank($0, at: at) < own }
        }
    }
}
