import ArbiterCluster
import ArbiterClusterTestSupport
import ArbiterCore
import ArbiterTestSupport
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// JOINs parked while no leader can answer them, on embedded nodes
/// (`EmbeddedClusterNodes`): answered by the next leader, refused at the join wait naming
/// etcd when this node's lease lapsed, and a lapsed leader's members joined to the new
/// leader once, under the node's new lease.
@Suite("cluster mode, embedded: parked joins")
struct EmbeddedParkedJoinTests {
    /// A JOIN while no node decides the panel waits for a leader instead of being refused:
    /// a kiosk that reconnects during a failover just waits a little longer.
    @Test func aJoinWaitsForTheNextLeaderAndIsAnsweredWithItsId() throws {
        let nodes = try EmbeddedClusterNodes(["n1"])
        #expect(nodes.leader() == "n1")
        let (alice, _) = try nodes.member("n1", name: "alice")
        nodes.leaseViews["n1"]?.setFailing(true)
        nodes.advance(milliseconds: 1_800)
        // The step-down: alice's idle snapshot of the ended term.
        _ = try alice.expect("OK JOIN")
        let kiosk = try nodes.client("n1", name: "kiosk")
        kiosk.send(#"{"cmd":"join","panel":"demo","id":"j1"}"#)
        nodes.settle()
        let meanwhile = kiosk.drain()
        #expect(meanwhile.isEmpty, "\(meanwhile)")
        nodes.etcdAnswersAgain("n1")
        let ok = try kiosk.expect(#"{"type":"ok","re":"join""#)
        #expect(ok.contains(#""id":"j1""#) && ok.contains(#""term":"#), "\(ok)")
    }

    /// A JOIN on a node that cannot reach etcd waits the join wait, then says why (not
    /// that the leader is unreachable: it is fine). /metrics says the lease lapsed.
    @Test func aJoinOnANodeWhoseLeaseLapsedIsRefusedNamingEtcd() throws {
        let nodes = try EmbeddedClusterNodes(
            ["n1", "n2"], panels: [EmbeddedOwedReleaseTests.panel], timing: EmbeddedOwedReleaseTests.timing, joinWaitMs: 1_000)
        let (leader, follower) = try nodes.leaderAndFollower()
        let context = try #require(nodes.context(follower))
        nodes.leaseViews[follower]?.setFailing(true)
        defer { nodes.leaseViews[follower]?.setFailing(false) }
        nodes.advance(milliseconds: 2_100)
        #expect(context.isLapsed, "the follower's lease never lapsed: \(nodes.describe("demo"))")
        for (node, lapsed) in [(follower, 1), (leader, 0)] {
            let page = try nodes.get("/metrics", on: node)
            #expect(page.contains("arbiter_cluster_lease_lapsed \(lapsed)\n"), "\(node): \(page)")
        }
        let bob = try nodes.client(follower, name: "bob")
        bob.send("JOIN demo")
        nodes.settle()
        #expect(bob.drain().isEmpty, "answered before the join wait")
        nodes.advance(milliseconds: 1_000)
        let answer = try bob.expect("ERROR")
        #expect(
            answer
                == "ERROR unavailable panel demo could not be joined for 1 s: this node cannot reach etcd right now (its lease lapsed: etcd has no majority, or this node is cut off from it); nothing was done, JOIN again later",
            "\(answer)")
        bob.send("PING after")
        #expect(try bob.readLine() == "PONG after")
    }

    /// A leader paused past its lease wakes lapsed, stops deciding, and learns that
    /// another node leads now: its members join the new leader only under its new lease,
    /// once (before, every member read `JOINED dave`, `LEFT dave`, `JOINED dave`).
    @Test func theOldLeadersMembersJoinTheNewLeaderOnlyUnderItsNewLease() throws {
        let nodes = try EmbeddedClusterNodes(["n1", "n2"])
        let (leader, follower) = try nodes.leaderAndFollower()
        let (carol, _) = try nodes.member(follower, name: "carol")
        let (dave, joined) = try nodes.member(leader, name: "dave")
        _ = try carol.expect("JOINED demo name=dave")
        _ = try dave.expect("JOINED demo name=dave")
        let oldTerm = try #require(field("term", of: joined))
        let context = try #require(nodes.context(leader))
        let host = try #require(nodes.host(leader))

        nodes.leaseViews[leader]?.setFailing(true)
        // Past the leader's TTL: its election key is gone and the follower campaigns.
        nodes.advance(milliseconds: 2_100)
        #expect(context.isLapsed, "the leader's lease never lapsed")
        let learned = eventually { host.queue.sync { host.clusterState.leader.node } == follower }
        #expect(learned, "the old leader never learned the new one: \(nodes.describe("demo"))")
        // While lapsed, nothing of dave's reaches the new leader.
        nodes.settle()
        let lapsed = carol.drain()
        #expect(!lapsed.contains { $0.contains("name=dave") }, "\(lapsed)")
        nodes.etcdAnswersAgain(leader)

        let seen = try dave.readLines(through: "JOINED demo name=dave")
        let snapshots = seen.filter { $0.hasPrefix("OK JOIN") }
        #expect(snapshots.first.flatMap { field("term", of: $0) } == oldTerm, "the step-down snapshot first: \(seen)")
        #expect(snapshots.last.flatMap { field("term", of: $0) } != oldTerm, "then the new leader's: \(seen)")
        let carolSaw = try carol.readLines(through: "JOINED demo name=dave")
        nodes.settle()
        let daves = (carolSaw + carol.drain()).filter { $0.contains("name=dave") }
        #expect(daves.count == 1 && daves.first?.hasPrefix("JOINED demo name=dave") == true, "\(carolSaw)")
    }
}
