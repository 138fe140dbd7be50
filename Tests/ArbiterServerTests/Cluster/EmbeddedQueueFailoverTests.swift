import ArbiterCluster
import ArbiterClusterTestSupport
import ArbiterCore
import ArbiterTestSupport
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// A queue group's line lives in its leader's core, and a new term starts it empty: each
/// session that waited is told `DEQUEUED ... reason=failover` by its own node, whether it
/// joined or not (docs/CLUSTER.md). Found with `arbiter-load queue` over three nodes: after
/// a `kill -9` of the leader, its contenders on the other nodes waited for ever for a
/// hand-off nobody would make. On embedded nodes (`EmbeddedClusterNodes`).
@Suite("cluster mode, embedded: a queue's waiters at a failover")
struct EmbeddedQueueFailoverTests {
    @Test func waitersOnOtherNodesAreToldTheirPlaceIsGone() throws {
        let nodes = try EmbeddedClusterNodes(["n1", "n2", "n3"], panels: [Panels.fair])
        let leader = try #require(nodes.leader(of: "f"))
        let followers = nodes.followers(of: leader)
        let alice = try nodes.client(followers[0], name: "alice")
        let bob = try nodes.client(followers[1], name: "bob")
        let (carol, _) = try nodes.member(followers[0], name: "carol", panel: "f")
        alice.send("DOWN f a")
        _ = try alice.expect("GRANTED f a")
        bob.send("DOWN f a")
        #expect(try bob.expect("QUEUED f a") == "QUEUED f a position=1 owner=alice")
        let bobSession = try #require(field("session", of: try carol.expect("QUEUED f a name=bob")))
        carol.send("DOWN f b")
        #expect(try carol.expect("QUEUED f b") == "QUEUED f b position=2 owner=alice")
        nodes.crash(leader)
        nodes.advance(milliseconds: EmbeddedFailoverTests.pastTheTTL)

        #expect(try bob.expect("DEQUEUED") == "DEQUEUED f a name=bob session=\(bobSession) position=1 reason=failover")
        // A member that waited reads its own, then the new term's snapshot with the line empty.
        let seen = try carol.readLines(through: "OK JOIN")
        let dequeued = seen.filter { $0.hasPrefix("DEQUEUED") }
        #expect(dequeued.count == 1 && dequeued.first?.hasPrefix("DEQUEUED f b name=carol session=") == true, "\(seen)")
        #expect(dequeued.first?.hasSuffix(" position=2 reason=failover") == true, "\(seen)")
        #expect(!seen.contains { $0.hasPrefix("WAITING") }, "\(seen)")
        // The line is empty and works again: bob presses and gets it.
        _ = try #require(nodes.leader(of: "f"), "\(nodes.describe("f"))")
        bob.send("DOWN f a")
        #expect(try bob.expect("GRANTED f a").hasPrefix("GRANTED f a fence="))
    }

    /// A waiter that left the line before the failover (its UP) is not told of a place it
    /// no longer had: the leader tells its node, with an empty notice, when it leaves.
    @Test func aWaiterThatLeftTheLineIsNotToldAgain() throws {
        let setup = try aliceHoldsBobWaits(aliceOnFollower: true)
        let (nodes, leader, follower, bob) = (setup.nodes, setup.leader, setup.follower, setup.bob)
        bob.send("UP f a")
        #expect(try bob.expect("OK UP") == "OK UP f a")
        nodes.crash(leader)
        nodes.advance(milliseconds: EmbeddedFailoverTests.pastTheTTL)
        #expect(nodes.leader(of: "f") == follower)
        nodes.settle()
        let after = bob.drain()
        #expect(!after.contains { $0.hasPrefix("DEQUEUED") }, "\(after)")
    }

    /// A leader that stops deciding tells its own waiters as it drops its core.
    @Test func aLeaderThatStopsDecidingTellsItsOwnWaiters() throws {
        let nodes = try EmbeddedClusterNodes(["n1"], panels: [Panels.fair])
        #expect(nodes.leader(of: "f") == "n1")
        let alice = try nodes.client("n1", name: "alice")
        let bob = try nodes.client("n1", name: "bob")
        alice.send("DOWN f a")
        _ = try alice.expect("GRANTED f a")
        bob.send("DOWN f h")
        #expect(try bob.expect("QUEUED f h") == "QUEUED f h position=1 owner=alice")
        nodes.leaseViews["n1"]?.setFailing(true)
        nodes.advance(milliseconds: 1_800)
        let line = try bob.expect("DEQUEUED")
        #expect(line.hasPrefix("DEQUEUED f h name=bob session="), "\(line)")
        #expect(line.hasSuffix(" position=1 reason=failover"), "\(line)")
        nodes.settle()
        #expect(!bob.drain().contains { $0.hasPrefix("DEQUEUED") })
        nodes.leaseViews["n1"]?.setFailing(false)
    }

    /// In the same term: the leader took the waiter out of the line when its node's links
    /// dropped (`reason=disconnect`), and nobody told the waiter, whose connection lives
    /// on. Its node sends its DOWN again after the drop: it is back in line, and gets the
    /// hand-off. Found with `bench/nemesis.py --workload queue` (node cut-offs).
    @Test func aWaiterTakenOutOfTheLineAtALinkDropIsPutBack() throws {
        let setup = try aliceHoldsBobWaits(aliceJoins: true)
        let (nodes, follower, alice, bob) = (setup.nodes, setup.follower, setup.alice, setup.bob)
        _ = try alice.expect("QUEUED f a name=bob")
        nodes.hub.flap(follower)
        #expect(try alice.expect("DEQUEUED f a name=bob").hasSuffix("reason=disconnect seq=5"))
        #expect(try alice.expect("QUEUED f a name=bob").contains(" position=1 "))
        nodes.settle()
        #expect(!bob.drain().contains { $0.hasPrefix("DEQUEUED") || $0.hasPrefix("QUEUED") })
        alice.send("UP f a")
        #expect(try bob.expect("GRANTED f a").hasPrefix("GRANTED f a fence="))
    }

    /// In the same term: the hand-off's GRANTED was lost on the way (frames dropped before
    /// the node resynchronised). The waiter's DOWN sent again is answered with its grant,
    /// which it reads as the hand-off.
    @Test func aHandOffLostOnTheWayReachesTheWaiterAfterTheResync() throws {
        let (setup, granted) = try bobGrantedByHisDownSentAgain()
        let (alice, bob) = (setup.alice, setup.bob)
        #expect(granted.hasPrefix("GRANTED f a fence="), "\(granted)")
        bob.send("UP f a")
        #expect(try bob.expect("OK UP") == "OK UP f a")
        alice.send("DOWN f a")
        #expect(try alice.expect("GRANTED f a").hasPrefix("GRANTED f a fence="))
    }

    /// The grant a waiter's DOWN sent again is answered with is the session's, as a
    /// hand-off's is: once the leader that made it dies, the session's UP is `OK UP ...
    /// ended=failover`, not `ERROR not-owner` from a new leader that never knew the grant.
    @Test func aGrantAnsweredToADownSentAgainEndsWithItsTerm() throws {
        let (setup, _) = try bobGrantedByHisDownSentAgain()
        let (nodes, leader, follower, bob) = (setup.nodes, setup.leader, setup.follower, setup.bob)
        nodes.crash(leader)
        nodes.advance(milliseconds: EmbeddedFailoverTests.pastTheTTL)
        #expect(nodes.leader(of: "f") == follower)
        bob.send("UP f a")
        #expect(try bob.readLine() == "OK UP f a ended=failover")
    }

    /// A hand-off for a place its node does not know the session waits in (here the place
    /// is forgotten by hand) is not passed on, and the grant is let go at once.
    @Test func aHandOffNobodyWaitsForIsLetGo() throws {
        let setup = try aliceHoldsBobWaits(aliceJoins: true)
        let (nodes, follower, alice, bob) = (setup.nodes, setup.follower, setup.alice, setup.bob)
        let host = try #require(nodes.host(follower, "f"))
        host.queue.sync { host.clusterState.following.waitingPlaces = [:] }
        alice.send("UP f a")
        let pressed = try alice.expect("PRESSED f a owner=bob")
        let fence = try #require(field("fence", of: pressed))
        #expect(try alice.expect("RELEASED f a") == "RELEASED f a reason=cancel owner=bob fence=\(fence) seq=8")
        nodes.settle()
        #expect(!bob.drain().contains { $0.hasPrefix("GRANTED") })
        alice.send("DOWN f a")
        #expect(try alice.expect("GRANTED f a").hasPrefix("GRANTED f a fence="))
    }

    /// Alice lets go of f a while every frame to bob's node is lost, so the hand-off's
    /// GRANTED never reaches bob; his node's link drops, it resynchronises and sends his
    /// DOWN again, which is answered with the grant. Returns that GRANTED.
    private func bobGrantedByHisDownSentAgain() throws -> (Setup, String) {
        let setup = try aliceHoldsBobWaits()
        let (nodes, leader, follower, alice, bob) = (setup.nodes, setup.leader, setup.follower, setup.alice, setup.bob)
        nodes.hub.swallow(framesTo: follower)
        alice.send("UP f a")
        _ = try alice.expect("OK UP f a")
        nodes.settle()
        #expect(bob.drain().isEmpty)
        nodes.hub.swallow(framesTo: follower, false)
        nodes.context(follower)?.linkDown(leader)
        return (setup, try bob.expect("GRANTED f a"))
    }

    /// Two nodes: alice holds f a (on the leader's node unless `aliceOnFollower`; a member
    /// of f when `aliceJoins`), and bob, on the other node, waits in line for it.
    private func aliceHoldsBobWaits(aliceOnFollower: Bool = false, aliceJoins: Bool = false) throws -> Setup {
        let nodes = try EmbeddedClusterNodes(["n1", "n2"], panels: [Panels.fair])
        let (leader, follower) = try nodes.leaderAndFollower(of: "f")
        let node = aliceOnFollower ? follower : leader
        let alice = aliceJoins ? try nodes.member(node, name: "alice", panel: "f").0 : try nodes.client(node, name: "alice")
        let bob = try nodes.client(follower, name: "bob")
        alice.send("DOWN f a")
        _ = try alice.expect("GRANTED f a")
        bob.send("DOWN f a")
        _ = try bob.expect("QUEUED f a")
        return Setup(nodes: nodes, leader: leader, follower: follower, alice: alice, bob: bob)
    }

    private struct Setup {
        let nodes: EmbeddedClusterNodes
        let leader: String
        let follower: String
        let alice: EmbeddedClient
        let bob: EmbeddedClient
    }
}
