import ArbiterCluster
import ArbiterClusterTestSupport
import ArbiterCore
import ArbiterTestSupport
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// Replies in flight, on embedded nodes (`EmbeddedClusterNodes`): a relayed command whose
/// answer never comes is answered at its deadline, one that is only slow is not, a reply
/// slot owed past the limit is given up, and a member whose re-join is never answered
/// reads the releases it was owed. Deadlines pass when the test moves the manual clock.
@Suite("cluster mode, embedded: replies in flight")
struct EmbeddedOwedReplyTests {
    /// A reply slot whose answer some path lost would hold every later reply of its
    /// connection for ever; the reactor's sweep answers it `ERROR unavailable` once it is
    /// owed past `ClusterSetup.owedReplyLimitMs`, and what waited behind it follows.
    @Test func aReplyOwedPastTheLimitIsAnsweredAndWhatWaitedFollows() throws {
        // Short waits, so the limit is 5.3 s.
        let nodes = try EmbeddedClusterNodes(["n1", "n2"], answerTimeoutMs: 300, joinWaitMs: 300)
        let (_, follower) = try nodes.leaderAndFollower()
        let bob = try nodes.client(follower, name: "bob")
        // The lost path: a slot nothing will ever answer.
        _ = bob.connection.reserveReplySlot()
        bob.send("PING a")
        nodes.advance(milliseconds: 5_000)
        nodes.settle()
        #expect(bob.drain().isEmpty, "the PONG went out before the slot owed ahead of it")
        nodes.advance(milliseconds: 400)
        let given = try bob.readLine()
        #expect(given.hasPrefix("ERROR unavailable") && given.contains("may or may not have been done"), "\(given)")
        #expect(try bob.readLine() == "PONG a")
        bob.send("PING b")
        #expect(try bob.readLine() == "PONG b")
    }

    /// The leader's frames to the follower vanish and no link drops. Past the deadline the
    /// command is answered, the members join again and hear events again.
    @Test func aCommandWhoseAnswerWasLostIsAnsweredAndTheMembersJoinAgain() throws {
        let nodes = try EmbeddedClusterNodes(["n1", "n2"], answerTimeoutMs: 300)
        let (leader, follower) = try nodes.leaderAndFollower()
        let (alice, _) = try nodes.member(follower, name: "alice")
        let bob = try nodes.client(follower, name: "bob")
        let (carol, _) = try nodes.member(leader, name: "carol")
        nodes.hub.swallow(framesTo: follower)
        bob.send("DOWN demo b1")
        // Decided at the leader, its answer and events swallowed on the way.
        _ = try carol.expect("PRESSED demo b1 owner=bob")
        nodes.hub.swallow(framesTo: follower, false)
        nodes.settle()
        #expect(bob.drain().isEmpty, "answered before the deadline")
        // No event follows to show a hole: only the deadline can answer it.
        nodes.advance(milliseconds: 300)
        let answer = try bob.readLine()
        #expect(answer.hasPrefix("ERROR unavailable") && answer.contains("did not answer within 300 ms"), "\(answer)")
        let told = try alice.readLines(through: "OK JOIN")
        #expect(told.contains { $0.hasPrefix("BUTTON demo b1") && $0.contains("state=pressed owner=bob") }, "\(told)")
        carol.send("DOWN demo talk")
        _ = try carol.expect("GRANTED demo talk")
        _ = try alice.expect("PRESSED demo talk owner=carol")
    }

    /// An answer that is only slow is not given up on: the leader hears the command only
    /// after 1.5 s of the 2 s deadline.
    @Test func aSlowAnswerWithinTheDeadlineStands() throws {
        let nodes = try EmbeddedClusterNodes(["n1", "n2"], answerTimeoutMs: 2_000)
        let (leader, follower) = try nodes.leaderAndFollower()
        let bob = try nodes.client(follower, name: "bob")
        nodes.hub.hold(framesTo: leader)
        bob.send("DOWN demo b1")
        nodes.advance(milliseconds: 1_500)
        nodes.settle()
        #expect(bob.drain().isEmpty)
        nodes.hub.release(framesTo: leader)
        #expect(try bob.readLine().hasPrefix("GRANTED demo b1"))
        bob.send("UP demo b1")
        _ = try bob.expect("OK UP demo b1")
    }

    /// A member whose re-join is never answered (the leader's frames to its node keep
    /// vanishing) is not left believing in grants: at the re-join's deadline it reads the
    /// releases it was owed.
    @Test func aMemberWhoseSnapshotNeverComesReadsItsReleasesAtTheDeadline() throws {
        let nodes = try EmbeddedClusterNodes(["n1", "n2"], answerTimeoutMs: 300)
        let (leader, follower) = try nodes.leaderAndFollower()
        let (alice, _) = try nodes.member(leader, name: "alice")
        let (bob, _) = try nodes.member(follower, name: "bob")
        alice.send("DOWN demo b2")
        _ = try bob.expect("FIRED demo b2 owner=alice")
        nodes.hub.swallow(framesTo: follower)
        nodes.context(follower)?.linkDown(leader)
        nodes.settle()
        #expect(bob.drain().isEmpty, "nothing is said before the snapshot or the deadline")
        nodes.advance(milliseconds: 300)
        let release = try bob.expect("RELEASED demo b2")
        #expect(release.hasPrefix("RELEASED demo b2 reason=failover owner=alice"), "\(release)")
        nodes.hub.swallow(framesTo: follower, false)
        // The re-join is sent again at its next deadline, and answered this time.
        nodes.advance(milliseconds: 300)
        _ = try bob.expect("OK JOIN demo")
    }
}
