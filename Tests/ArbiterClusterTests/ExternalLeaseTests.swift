import ArbiterCore
import Testing
@testable import ArbiterCluster

/// `ClusterNode` with its lease kept by someone else (the runtime's lease thread).
@Suite struct ExternalLeaseTests {
    let clock = ManualClock()

    @Test func aRenewalThatArrivesAfterTheDeadlineDoesNotHideIt() throws {
        let etcd = InMemoryEtcd(clock: clock.read)
        let node = ClusterNode(name: "n1", advertise: "a:1", panels: ["demo"], etcd: etcd, clock: clock.read)
        node.leaseIsExternal = true
        var lease = NodeLeaseStateMachine(timing: .standard)
        lease.grantSent(now: clock.now)
        _ = lease.granted(try etcd.grantLease(ttlSeconds: 3))
        node.adoptLease(lease)
        for _ in 0..<5 where node.canDecide("demo") == nil {
            node.step()
            clock.advance(100)
        }
        let block = try #require(node.canDecide("demo"))
        var actions: [PanelLeadershipAction] = []
        node.onAction = { _, action in actions.append(action) }
        // Paused past the deadline; the keepalive sent just before the pause is answered
        // on waking and would move the deadline forward.
        clock.advance(3_000)
        let id = try #require(lease.leaseID)
        let sentBeforeThePause = clock.now + (-2_900)
        lease.keepAliveSent(now: sentBeforeThePause)
        _ = lease.keepAliveAnswered(EtcdLease(id: id, ttlSeconds: 3), sentAt: sentBeforeThePause)
        node.adoptLease(lease)
        #expect(actions.first == .stopDeciding(term: block.term, reason: .leaseDeadline))
        #expect(node.canDecide("demo") == nil)
    }

    @Test func stepLeavesAnExternalLeaseAlone() {
        let etcd = InMemoryEtcd(clock: clock.read)
        let node = ClusterNode(name: "n1", advertise: "a:1", panels: ["demo"], etcd: etcd, clock: clock.read)
        node.leaseIsExternal = true
        for _ in 0..<5 {
            node.step()
            clock.advance(100)
        }
        #expect(node.lease.leaseID == nil)
        #expect(node.canDecide("demo") == nil)
    }

    @Test func aLostLeaseTakesThePanelsWithIt() throws {
        let etcd = InMemoryEtcd(clock: clock.read)
        let node = ClusterNode(name: "n1", advertise: "a:1", panels: ["demo"], etcd: etcd, clock: clock.read)
        node.leaseIsExternal = true
        var lease = NodeLeaseStateMachine(timing: .standard)
        lease.grantSent(now: clock.now)
        _ = lease.granted(try etcd.grantLease(ttlSeconds: 3))
        node.adoptLease(lease)
        for _ in 0..<5 where node.canDecide("demo") == nil {
            node.step()
            clock.advance(100)
        }
        #expect(node.canDecide("demo") != nil)
        #expect(node.nodeAddresses == ["n1": "a:1"])
        _ = lease.keepAliveFailed(.leaseNotFound)
        node.adoptLease(lease)
        #expect(node.canDecide("demo") == nil)
    }
}
