import ArbiterCluster
import ArbiterClusterTestSupport
import ArbiterCore
import ArbiterTestSupport
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// Grants that ended before or at a failover, released late: each is answered with the
/// reason it ended for, once.
@Suite("cluster mode, embedded: releases of ended grants")
struct EmbeddedEndedGrantTests {
    static let panel: PanelConfig = {
        var panel = EmbeddedFailoverTests.panel
        panel.buttons.append(ButtonConfig(id: "zap", kind: .hold, group: "zap", holdMs: 300, progressMs: 0))
        return panel
    }()

    /// A grant the leader ended itself (timed out, fired, reset) before it died, held by a
    /// session on a node with no member of the panel: the leader told that node with a
    /// `grantEnded` frame, and the session's late `UP` is answered as the dead leader
    /// would have. A node that did not announce `grant-ended` (an older version) is sent
    /// no such frame, and answers `ended=failover` as before.
    @Test(arguments: [true, false])
    func grantsTheLeaderEndedBeforeItDiedAreAnsweredWithTheirReason(announced: Bool) throws {
        let older: Set<String> = [ClusterFeatures.panelState, ClusterFeatures.kick]
        let names = ["n1", "n2", "n3"]
        let nodes = try EmbeddedClusterNodes(
            names, panels: [Self.panel], features: announced ? [:] : Dictionary(uniqueKeysWithValues: names.map { ($0, older) }))
        let leader = try #require(nodes.leader())
        let (alice, _) = try nodes.member(leader, name: "alice")
        let carol = try nodes.client(nodes.followers(of: leader)[0], name: "carol")
        carol.send("DOWN demo quick")
        _ = try carol.expect("GRANTED demo quick")
        carol.send("DOWN demo zap")
        let zapFence = try #require(field("fence", of: try carol.expect("GRANTED demo zap")))
        // Past quick's 200 ms timeout, then zap's 300 ms hold.
        nodes.advance(milliseconds: 200)
        #expect(try alice.expect("RELEASED demo quick").contains("reason=timeout owner=carol"))
        nodes.advance(milliseconds: 100)
        #expect(try alice.expect("RELEASED demo zap").contains("reason=fired owner=carol"))
        carol.send("DOWN demo b1")
        _ = try carol.expect("GRANTED demo b1")
        alice.send("RESET demo")
        #expect(try alice.expect("RELEASED demo b1").contains("reason=reset owner=carol"))
        // Its answer follows the frames on the leader's link to carol's node.
        carol.send("DOWN demo b3")
        _ = try carol.expect("GRANTED demo b3")

        nodes.crash(leader)
        nodes.advance(milliseconds: EmbeddedFailoverTests.pastTheTTL)
        // Once carol's node follows the new leader, the old term's grants are its to answer.
        _ = try #require(nodes.leader(), "\(nodes.describe("demo"))")
        carol.send("DOWN demo b2")
        #expect(try carol.readLine().hasPrefix("GRANTED demo b2"))
        carol.send("UP demo quick")
        #expect(try carol.expect("OK UP") == "OK UP demo quick ended=\(announced ? "timeout" : "failover")")
        carol.send("UP demo zap fence=\(zapFence)")
        #expect(try carol.expect("OK UP") == "OK UP demo zap ended=\(announced ? "fired" : "failover")")
        carol.send("UP demo zap")
        #expect(try carol.expect("ERROR").hasPrefix("ERROR not-owner"))
        carol.send("UP demo b1")
        #expect(try carol.expect("OK UP") == "OK UP demo b1 ended=\(announced ? "reset" : "failover")")
        carol.send("UP demo b3")
        #expect(try carol.expect("OK UP") == "OK UP demo b3 ended=failover")
    }

    /// The leader's own session: its core forgets an ended grant once it answered
    /// `ended=`, so when the node stops deciding it does not keep that grant to answer
    /// it a second time.
    @Test func aLeadersOwnSessionIsAnsweredEndedOnceAlsoAfterItStepsDown() throws {
        let nodes = try EmbeddedClusterNodes(["n1"], panels: [Self.panel])
        #expect(nodes.leader() == "n1")
        let (alice, _) = try nodes.member("n1", name: "alice")
        alice.send("DOWN demo b1")
        _ = try alice.expect("GRANTED demo b1")
        alice.send("RESET demo")
        _ = try alice.expect("RELEASED demo b1 reason=reset")
        alice.send("UP demo b1")
        #expect(try alice.expect("OK UP") == "OK UP demo b1 ended=reset")
        alice.send("UP demo b1")
        #expect(try alice.expect("ERROR").hasPrefix("ERROR not-owner"))
        alice.send("DOWN demo sos")
        _ = try alice.expect("GRANTED demo sos")
        nodes.leaseViews["n1"]?.setFailing(true)
        nodes.advance(milliseconds: 1_800)
        _ = try alice.expect("RELEASED demo sos reason=failover")
        _ = try alice.readLines(through: "OK JOIN")
        // Not answered here again: it goes on as any release does, to no leader.
        alice.send("UP demo b1")
        #expect(try alice.expect("ERROR").hasPrefix("ERROR unavailable"))
        alice.send("UP demo sos")
        #expect(try alice.expect("OK UP") == "OK UP demo sos ended=failover")
        nodes.etcdAnswersAgain("n1")
        _ = try alice.readLines(through: "OK JOIN")
        alice.send("UP demo b1")
        #expect(try alice.expect("ERROR").hasPrefix("ERROR not-owner"))
    }

    /// A grant handed over from a queue's line (a hand-off `GRANTED`, not the answer to a
    /// DOWN) ends with its term as well.
    @Test func aHandOffTheCrashedLeaderMadeIsAnsweredEndedFailover() throws {
        let nodes = try EmbeddedClusterNodes(["n1", "n2", "n3"], panels: [Panels.fair])
        let leader = try #require(nodes.leader(of: "f"))
        let followers = nodes.followers(of: leader)
        let alice = try nodes.client(followers[0], name: "alice")
        let bob = try nodes.client(followers[1], name: "bob")
        alice.send("DOWN f a")
        _ = try alice.expect("GRANTED f a")
        bob.send("DOWN f a")
        _ = try bob.expect("QUEUED f a")
        alice.send("UP f a")
        _ = try alice.expect("OK UP f a")
        _ = try bob.expect("GRANTED f a")
        nodes.crash(leader)
        nodes.advance(milliseconds: EmbeddedFailoverTests.pastTheTTL)
        _ = try #require(nodes.leader(of: "f"), "\(nodes.describe("f"))")
        bob.send("UP f a")
        #expect(try bob.readLine() == "OK UP f a ended=failover")
    }
}
