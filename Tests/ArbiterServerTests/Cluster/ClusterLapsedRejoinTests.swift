import ArbiterCluster
import ArbiterClusterTestSupport
import ArbiterCore
import ArbiterTestSupport
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// A leader paused past its lease (SIGSTOP, a VM freeze) wakes lapsed, stops deciding, and
/// learns that another node leads now. Found by hand with three nodes: its members were
/// joined to the new leader at once, under the lease that had expired, then again under
/// the new one, which ended the first run's sessions; every member on every node read
/// `JOINED dave`, `LEFT dave`, `JOINED dave`.
@Suite("cluster mode: a lapsed node's members join the new leader once", .serialized)
struct ClusterLapsedRejoinTests {
    @Test func theOldLeadersMembersJoinTheNewLeaderOnlyUnderItsNewLease() throws {
        let nodes = try ClusterTestNodes(["n1", "n2"])
        let (leader, follower) = try nodes.leaderAndFollower()
        let (carol, _) = try nodes.member(follower, name: "carol")
        let (dave, joined) = try nodes.member(leader, name: "dave")
        _ = try carol.expect("JOINED demo name=dave")
        _ = try dave.expect("JOINED demo name=dave")
        let oldTerm = try #require(field("term", of: joined))
        let context = try #require(nodes.context(leader))
        let host = try #require(nodes.servers[leader]?.stateForTesting?.panelsByID["demo"])

        nodes.leaseViews[leader]?.setFailing(true)
        #expect(eventually(seconds: 10) { context.isLapsed }, "the leader's lease never lapsed")
        let learned = eventually(seconds: 10) { host.queue.sync { host.clusterState.leader.node } == follower }
        #expect(learned, "the old leader never learned the new one: \(nodes.describe("demo"))")
        // While lapsed, nothing of dave's reaches the new leader.
        let lapsed = carol.drain(for: 0.5)
        #expect(!lapsed.contains { $0.contains("name=dave") }, "\(lapsed)")
        nodes.leaseViews[leader]?.setFailing(false)

        let seen = try dave.readLines(through: "JOINED demo name=dave", timeout: 10)
        let snapshots = seen.filter { $0.hasPrefix("OK JOIN") }
        #expect(snapshots.first.flatMap { field("term", of: $0) } == oldTerm, "the step-down snapshot first: \(seen)")
        #expect(snapshots.last.flatMap { field("term", of: $0) } != oldTerm, "then the new leader's: \(seen)")
        let carolSaw = try carol.readLines(through: "JOINED demo name=dave", timeout: 5) + carol.drain(for: 0.5)
        let daves = carolSaw.filter { $0.contains("name=dave") }
        #expect(daves.count == 1 && daves.first?.hasPrefix("JOINED demo name=dave") == true, "\(carolSaw)")
    }

    /// The snapshot a leader sends as it stops deciding shows its groups as every snapshot
    /// does, ended with the term (a closed round); before, their lines were left out.
    @Test func theStepDownSnapshotShowsTheRoundClosed() throws {
        let nodes = try ClusterTestNodes(["n1"], panels: [Panels.fair])
        #expect(nodes.leader(of: "f") == "n1")
        let (host, _) = try nodes.member("n1", name: "host", panel: "f")
        host.send("ARM f quiz")
        _ = try host.expect("ARMED f quiz")
        nodes.leaseViews["n1"]?.setFailing(true)
        let snapshot = try host.readLines(through: "OK JOIN", timeout: 10)
        #expect(snapshot.contains("ROUND f quiz state=closed"), "\(snapshot)")
        #expect(snapshot.filter { $0.hasPrefix("BUTTON f ") }.count == Panels.fair.buttons.count, "\(snapshot)")
        nodes.leaseViews["n1"]?.setFailing(false)
    }
}
