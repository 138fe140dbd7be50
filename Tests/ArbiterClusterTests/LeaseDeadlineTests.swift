import ArbiterCore
import ArbiterIO
import Testing
@testable import ArbiterCluster

@Suite struct LeaseDeadlineTests {
    let clock = ManualClock.forCluster()

    @Test func theDeadlineCountsFromWhenTheKeepaliveWasSentNotAnswered() {
        var lease = NodeLeaseStateMachine(timing: .standard)
        let sent = clock.now
        lease.grantSent(now: sent)
        #expect(lease.granted(EtcdLease(id: 1, ttlSeconds: 3)) == .renewed(safeUntil: sent + 2_500))
        let keepAliveSent = sent + 500
        lease.keepAliveSent(now: keepAliveSent)
        // Answered 900 ms later: the deadline still counts from the send.
        #expect(lease.keepAliveAnswered(EtcdLease(id: 1, ttlSeconds: 3), sentAt: keepAliveSent) == .renewed(safeUntil: keepAliveSent + 2_500))
        #expect(lease.isSafe(at: keepAliveSent + 2_499))
        #expect(!lease.isSafe(at: keepAliveSent + 2_500))
    }

    @Test func theDeadlineUsesTheTTLEtcdGrantedNotTheOneAsked() {
        var lease = NodeLeaseStateMachine(timing: ClusterTiming(ttlSeconds: 1, keepAliveIntervalMilliseconds: 200, safetyMarginMilliseconds: 500))
        lease.grantSent(now: clock.now)
        #expect(lease.granted(EtcdLease(id: 1, ttlSeconds: 2)) == .renewed(safeUntil: clock.now + 1_500))
    }

    @Test func anAnswerThatComesBackLateNeverMovesTheDeadlineBack() {
        var lease = NodeLeaseStateMachine(timing: .standard)
        lease.grantSent(now: clock.now)
        _ = lease.granted(EtcdLease(id: 1, ttlSeconds: 3))
        let early = clock.now + 500
        let late = clock.now + 1_000
        lease.keepAliveSent(now: early)
        lease.keepAliveSent(now: late)
        _ = lease.keepAliveAnswered(EtcdLease(id: 1, ttlSeconds: 3), sentAt: late)
        #expect(lease.keepAliveAnswered(EtcdLease(id: 1, ttlSeconds: 3), sentAt: early) == .renewed(safeUntil: late + 2_500))
    }

    @Test func aZeroTTLOrLeaseNotFoundMeansLost() {
        var lease = NodeLeaseStateMachine(timing: .standard)
        lease.grantSent(now: clock.now)
        _ = lease.granted(EtcdLease(id: 1, ttlSeconds: 3))
        #expect(lease.keepAliveAnswered(EtcdLease(id: 1, ttlSeconds: 0), sentAt: clock.now) == .lost)
        #expect(lease.tick(now: clock.now) == .grant)

        var other = NodeLeaseStateMachine(timing: .standard)
        other.grantSent(now: clock.now)
        _ = other.granted(EtcdLease(id: 2, ttlSeconds: 3))
        #expect(other.keepAliveFailed(.unavailable("x")) == .none)
        #expect(other.keepAliveFailed(.leaseNotFound) == .lost)
        #expect(other.safeUntil == nil)
    }

    /// The central safety property: at no instant may the node believe it is safe while
    /// the lease could already have expired in etcd, whatever the keepalives' fate.
    @Test func theNodeIsNeverSafeWhenEtcdMayHaveExpiredTheLease() throws {
        let etcd = InMemoryEtcd(clock: clock.read)
        var lease = NodeLeaseStateMachine(timing: .standard)
        lease.grantSent(now: clock.now)
        _ = lease.granted(try etcd.grantLease(ttlSeconds: 3))
        let id = try #require(lease.leaseID)
        // Keepalives every 500 ms, each answered 0-400 ms late, then they stop for good.
        var answered = 0
        for ms in 0..<12_000 {
            clock.advance(1)
            if ms < 4_000, case .keepAlive = lease.tick(now: clock.now) {
                let sentAt = clock.now
                lease.keepAliveSent(now: sentAt)
                // etcd restarts the TTL at once (the worst case); the answer travels back slowly.
                let answer = try etcd.keepAlive(lease: id)
                clock.advance(Int64(answered * 97 % 400))
                _ = lease.keepAliveAnswered(answer, sentAt: sentAt)
                answered += 1
            }
            if lease.isSafe(at: clock.now) {
                #expect(etcd.leaseIsAlive(id), "safe at \(clock.now) but etcd expired the lease")
            }
        }
        #expect(answered >= 6)
        #expect(!etcd.leaseIsAlive(id))
        #expect(!lease.isSafe(at: clock.now))
    }

    @Test func unusableTimingsAreNamed() {
        #expect(ClusterTiming.standard.problem == nil)
        #expect(ClusterTiming(ttlSeconds: 3, safetyMarginMilliseconds: 3_000).problem != nil)
        #expect(ClusterTiming(ttlSeconds: 3, keepAliveIntervalMilliseconds: 1_500, safetyMarginMilliseconds: 1_000).problem != nil)
    }
}
