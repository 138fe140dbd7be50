import ArbiterCluster
import ArbiterClusterTestSupport
import ArbiterCore
import ArbiterTestSupport
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// A node's lease lapsing, on embedded nodes (`EmbeddedClusterNodes`): the step-down
/// snapshot shows the round closed, and a command read before the node timer noticed the
/// lapse is not relayed.
@Suite("cluster mode, embedded: lapses")
struct EmbeddedLapseTests {
    /// The snapshot a leader sends as it stops deciding shows its groups as every snapshot
    /// does, ended with the term (a closed round).
    @Test func theStepDownSnapshotShowsTheRoundClosed() throws {
        let nodes = try EmbeddedClusterNodes(["n1"], panels: [Panels.fair])
        #expect(nodes.leader(of: "f") == "n1")
        let (host, _) = try nodes.member("n1", name: "host", panel: "f")
        host.send("ARM f quiz")
        _ = try host.expect("ARMED f quiz")
        nodes.leaseViews["n1"]?.setFailing(true)
        nodes.advance(milliseconds: 1_800)
        let snapshot = try host.readLines(through: "OK JOIN")
        #expect(snapshot.contains("ROUND f quiz state=closed"), "\(snapshot)")
        #expect(snapshot.filter { $0.hasPrefix("BUTTON f ") }.count == Panels.fair.buttons.count, "\(snapshot)")
        nodes.leaseViews["n1"]?.setFailing(false)
    }

    /// A node woken past its lease reads its clients' commands before its timer notices
    /// the lapse: the relay itself checks the lease, so the command is refused, not
    /// granted by the leader and ended again.
    @Test func aCommandReadBeforeTheLapseIsNoticedIsNotRelayed() throws {
        let nodes = try EmbeddedClusterNodes(["n1", "n2"])
        let (leader, follower) = try nodes.leaderAndFollower()
        let (alice, _) = try nodes.member(leader, name: "alice")
        let bob = try nodes.client(follower, name: "bob")
        let context = try #require(nodes.context(follower))
        let old = try #require(context.runtime.leaseID)
        // The node timer's check, once: the panels synchronise under the lease.
        nodes.tick()
        #expect(eventually { context.synchronisedLease == old }, "the node timer never synchronised")
        context.stopNodeTimerForTesting()
        try nodes.etcd.with { (etcd) throws(EtcdError) in try etcd.revokeLease(old) }
        // The next keepalive hears the lease is gone; a new one is granted at once.
        nodes.advance(milliseconds: EmbeddedClusterNodes.timing.keepAliveIntervalMilliseconds, ticking: false)
        #expect(eventually { context.runtime.safeLeaseID().map { $0 != old } ?? false }, "a new lease")
        #expect(!context.isLapsed, "the timer was meant not to have noticed")
        bob.send("DOWN demo b1")
        let answer = try bob.readLine()
        #expect(answer.hasPrefix("ERROR unavailable") && answer.contains("cannot reach etcd"), "\(answer)")
        nodes.settle()
        let heard = alice.drain()
        #expect(!heard.contains { $0.hasPrefix("PRESSED demo b1") }, "relayed and granted: \(heard)")
    }
}
