import ArbiterCluster
import ArbiterClusterTestSupport
import ArbiterCore
import ArbiterTestSupport
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// Releases a node owes its sessions, on embedded nodes (`EmbeddedClusterNodes`): a
/// release while the node's own lease has lapsed is still passed on (the finger lifted
/// is not lost, the hold does not fire), and a release is answered `ended=` once, also
/// across a failover.
@Suite("cluster mode, embedded: owed releases")
struct EmbeddedOwedReleaseTests {
    /// The node stops trusting its lease 2 s after its last answered keepalive; etcd keeps
    /// it until 3 s. The release comes in between.
    static let timing = ClusterTiming(ttlSeconds: 3, keepAliveIntervalMilliseconds: 100, safetyMarginMilliseconds: 1000)
    static let panel = PanelConfig(
        id: "demo", title: "Lapse", buttons: [ButtonConfig(id: "sos", kind: .hold, group: "emergency", holdMs: 4000, progressMs: 0)])

    @Test func aHoldLiftedWhileItsNodesLeaseHasLapsedIsReleasedNotFired() throws {
        let nodes = try EmbeddedClusterNodes(["n1", "n2"], panels: [Self.panel], timing: Self.timing)
        let (leader, follower) = try nodes.leaderAndFollower()
        let (alice, _) = try nodes.member(leader, name: "alice")
        let bob = try nodes.client(follower, name: "bob")
        bob.send("DOWN demo sos")
        _ = try bob.expect("GRANTED demo sos")
        _ = try alice.expect("PRESSED demo sos owner=bob")
        let context = try #require(nodes.context(follower))
        nodes.leaseViews[follower]?.setFailing(true)
        // Past the follower's safe deadline, within its TTL, short of the hold's 4 s.
        nodes.advance(milliseconds: 2_100)
        #expect(context.isLapsed, "the follower's lease never lapsed: \(nodes.describe("demo"))")

        bob.send("UP demo sos")
        let answer = try bob.expect("ERROR")
        #expect(
            answer.hasPrefix("ERROR unavailable this node cannot reach etcd right now (its lease lapsed); the release was passed on to panel demo's leader"),
            "\(answer)")
        #expect(answer.contains("may or may not have been done"), "\(answer)")
        let seen = try alice.readLines(through: "RELEASED demo sos")
        #expect(seen.last?.contains("reason=up owner=bob") == true, "\(seen)")
        #expect(!seen.contains { $0.hasPrefix("FIRED") }, "fired after the finger was lifted: \(seen)")
        nodes.leaseViews[follower]?.setFailing(false)
    }

    /// `ended=` answers the first release of a grant that ended, and only the first: a
    /// relayed session's second `UP` after a reset is the leader's `not-owner`, and stays
    /// so after the leader dies; a grant the failover ended is answered `ended=failover`.
    @Test func aResetGrantsReleaseIsAnsweredEndedOnceAlsoAcrossAFailover() throws {
        let nodes = try EmbeddedClusterNodes(["n1", "n2", "n3"], panels: [EmbeddedFailoverTests.panel])
        let leader = try #require(nodes.leader())
        let (alice, _) = try nodes.member(leader, name: "alice")
        let carol = try nodes.client(nodes.followers(of: leader)[0], name: "carol")
        carol.send("DOWN demo b1")
        _ = try carol.expect("GRANTED demo b1")
        alice.send("RESET demo")
        #expect(try alice.expect("RELEASED demo b1").contains("reason=reset owner=carol"))
        // Its answer follows the leader's frames about the reset on the link to carol's node.
        carol.send("DOWN demo b3")
        _ = try carol.expect("GRANTED demo b3")
        carol.send("UP demo b1")
        #expect(try carol.expect("OK UP") == "OK UP demo b1 ended=reset")
        carol.send("UP demo b1")
        #expect(try carol.expect("ERROR").hasPrefix("ERROR not-owner"))

        nodes.crash(leader)
        nodes.advance(milliseconds: EmbeddedFailoverTests.pastTheTTL)
        _ = try #require(nodes.leader(), "\(nodes.describe("demo"))")
        carol.send("UP demo b1")
        #expect(try carol.readLine().hasPrefix("ERROR not-owner"))
        carol.send("UP demo b3")
        #expect(try carol.expect("OK UP") == "OK UP demo b3 ended=failover")
    }
}
