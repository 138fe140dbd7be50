import ArbiterCore
import ArbiterIO
import Testing
@testable import ArbiterCluster

/// `ClusterNode` with its lease kept by someone else (the runtime's lease thread).
@Suite struct ExternalLeaseTests {
    let clock = ManualClock.forCluster()

    /// A node whose lease is kept by someone else, and a lease granted by `etcd` now.
    private func externalNode(_ etcd: InMemoryEtcd) throws -> (ClusterNode, NodeLeaseStateMachine) {
        let node = ClusterNode(name: "n1", advertise: "a:1", panels: ["demo"], etcd: etcd, clock: clock.read)
        node.leaseIsExternal = true
        var lease = NodeLeaseStateMachine(timing: .standard)
        lease.grantSent(now: clock.now)
        _ = lease.granted(try etcd.grantLease(ttlSeconds: 3))
        return (node, lease)
    }

    @Test func aRenewalThatArrivesAfterTheDeadlineDoesNotHideIt() throws {
        let etcd = InMemoryEtcd(clock: clock.read)
        var (node, lease) = try externalNode(etcd)
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
        var (node, lease) = try externalNode(etcd)
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

    /// A node leading `demo` under a lease granted now, with `externalLease` reading `held`.
    private func leader(_ etcd: InMemoryEtcd, held: Held) throws -> ClusterNode {
        let (node, lease) = try externalNode(etcd)
        held.lease = lease
        held.safeSince = clock.now
        node.adoptLease(lease, safeSince: clock.now)
        node.externalLease = { (held.lease, held.safeSince) }
        for _ in 0..<5 where node.canDecide("demo") == nil {
            node.step()
            clock.advance(100)
        }
        _ = try #require(node.canDecide("demo"))
        return node
    }

    final class Held {
        var lease = NodeLeaseStateMachine(timing: .standard)
        var safeSince: Instant?

        /// A keepalive sent and answered at `now`, `safeSince` as the driver would keep it.
        func renew(at now: Instant) {
            let wasSafe = lease.isSafe(at: now)
            let id = lease.leaseID!
            lease.keepAliveSent(now: now)
            _ = lease.keepAliveAnswered(EtcdLease(id: id, ttlSeconds: 3), sentAt: now)
            if !wasSafe { safeSince = now }
        }
    }

    /// A leader whose driver renews on time while the node's step is stuck in a call to a
    /// frozen member (the driver's `adoptLease` waits behind the step); the step comes back
    /// past the deadline the node was last handed (2.5 s after the grant). What it did, and
    /// whether it may still decide.
    private func stalledStep(readingTheDriversLease: Bool) throws -> ([PanelLeadershipAction], decides: Bool) {
        let etcd = InMemoryEtcd(clock: clock.read)
        let held = Held()
        let node = try leader(etcd, held: held)
        if !readingTheDriversLease { node.externalLease = nil }
        var actions: [PanelLeadershipAction] = []
        node.onAction = { _, action in actions.append(action) }
        clock.advance(1_000)
        held.renew(at: clock.now)
        _ = try etcd.keepAlive(lease: try #require(held.lease.leaseID))
        clock.advance(2_000)
        node.step()
        return (actions, node.canDecide("demo") != nil)
    }

    @Test func aStepHeldUpInACallJudgesTheDeadlineByTheRenewalsThatCameMeanwhile() throws {
        let (actions, decides) = try stalledStep(readingTheDriversLease: true)
        #expect(!actions.contains { if case .stopDeciding = $0 { true } else { false } }, "\(actions)")
        #expect(decides)
        // What this guards against: the node's own copy of the lease, stale, steps down.
        let (stale, _) = try stalledStep(readingTheDriversLease: false)
        #expect(stale.contains { if case .stopDeciding(_, .leaseDeadline) = $0 { true } else { false } })
    }

    @Test func aRenewalAfterABreakStillStepsDown() throws {
        let etcd = InMemoryEtcd(clock: clock.read)
        let held = Held()
        let node = try leader(etcd, held: held)
        var actions: [PanelLeadershipAction] = []
        node.onAction = { _, action in actions.append(action) }
        // No renewal until past the deadline (2.5 s after the grant): a new safe period
        // begins at the late renewal, and the node must have stopped at the deadline.
        clock.advance(2_700)
        held.renew(at: clock.now)
        _ = try etcd.keepAlive(lease: try #require(held.lease.leaseID))
        node.step()
        #expect(actions.first.map { if case .stopDeciding(_, .leaseDeadline) = $0 { true } else { false } } == true, "\(actions)")
    }

    @Test func aNodeWhoseLeaseEndedWaitsTheSafeWindowBeforeItCampaignsAgain() throws {
        let etcd = InMemoryEtcd(clock: clock.read)
        let node = ClusterNode(name: "n1", advertise: "a:1", panels: ["demo"], etcd: etcd, clock: clock.read)
        for _ in 0..<10 where node.canDecide("demo") == nil {
            node.step()
            clock.advance(100)
        }
        #expect(node.canDecide("demo") != nil)
        #expect(node.campaignsFrom == nil, "a node that never lost a lease campaigns at once")
        // etcd ends the lease long before its TTL (etcd 3.4's old leader, woken).
        let old = try #require(node.lease.leaseID)
        try etcd.revokeLease(old)
        var heardAt: Instant?
        var campaignedAt: Instant?
        node.onAction = { [clock] _, action in
            if case .startDeciding = action, campaignedAt == nil { campaignedAt = clock.now }
        }
        for _ in 0..<80 {
            node.step()
            if heardAt == nil, node.lease.leaseID != old { heardAt = clock.now }
            if campaignedAt != nil, node.canDecide("demo") != nil { break }
            clock.advance(100)
        }
        let heard = try #require(heardAt)
        let campaigned = try #require(campaignedAt)
        #expect(campaigned.since(heard) >= 2_500, "decided again \(campaigned.since(heard)) ms after the lease's end was heard")
        #expect(node.canDecide("demo") != nil, "and leads again after that")
    }

    @Test func aLeaseThatComesInTheMiddleOfAStepIsRegisteredBeforeTheNodeCampaigns() throws {
        let etcd = InMemoryEtcd(clock: clock.read)
        let (node, granted) = try externalNode(etcd)
        // The driver's lease arrives after the step's first reads: past its `observe`.
        var reads = 0
        node.externalLease = {
            reads += 1
            return reads < 3 ? (NodeLeaseStateMachine(timing: .standard), nil) : (granted, nil)
        }
        for _ in 0..<10 where node.canDecide("demo") == nil {
            node.step()
            clock.advance(100)
        }
        #expect(node.canDecide("demo") != nil)
        // Other nodes read a leader's address from its registration: it must come first.
        let registration = try #require(try etcd.range(.key(node.keys.node("n1"))).kvs.first)
        let election = try #require(try etcd.range(.key(node.keys.leader("demo"))).kvs.first)
        #expect(registration.createRevision < election.createRevision)
    }
}
