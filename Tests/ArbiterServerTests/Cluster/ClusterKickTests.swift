import ArbiterCluster
import ArbiterClusterTestSupport
import ArbiterCore
import ArbiterTestSupport
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// An admin on any node may `KICK` a session on another node, as on one node: the
/// session's node checks the admin's key against the panels the session joined or
/// pressed in, and closes it. Before, any session of another node was `no-such-session`.
@Suite("cluster mode: KICK across nodes", .serialized)
struct ClusterKickTests {
    static let keyed = PanelConfig(
        id: "k", title: "Keyed", buttons: PanelConfig.demo.buttons, keys: PanelKeys(view: nil, press: nil, admin: "adm1n"))

    /// Until `node` has read `other`'s registration (read once a second while the watch is
    /// open): a session of a node not known yet is no session to it.
    static func knows(_ nodes: ClusterTestNodes, _ node: String, _ other: String) -> Bool {
        eventually(seconds: 5) { nodes.context(node)?.runtime.nodeAddresses()[other] != nil }
    }

    static func session(_ welcomeOrHello: String) throws -> String {
        try #require(welcomeOrHello.split(separator: " ").first { $0.hasPrefix("session=") }.map { String($0.dropFirst("session=".count)) })
    }

    @Test func anAdminKicksASessionOnAnotherNode() throws {
        let nodes = try ClusterTestNodes(["n1", "n2"])
        let (leader, follower) = try nodes.leaderAndFollower()
        let (alice, _) = try nodes.member(leader, name: "alice")
        let bob = try nodes.client(follower, name: "bob")
        bob.send("HELLO bob")
        let target = try Self.session(try bob.expect("OK HELLO"))
        bob.send("DOWN demo b1")
        _ = try bob.expect("GRANTED demo b1")
        _ = try alice.expect("PRESSED demo b1 owner=bob")

        let admin = try nodes.client(leader, name: "root")
        #expect(Self.knows(nodes, leader, follower))
        admin.send("KICK \(target)")
        admin.send("PING after")
        let lines = try admin.readLines(through: "PONG")
        #expect(lines == ["OK KICK \(target)", "PONG after"])
        #expect(bob.waitForClose(), "the kicked session stays open")
        _ = try alice.expect("RELEASED demo b1 reason=disconnect")
        // Gone now: asked again, its node says so.
        admin.send("KICK \(target)")
        #expect(try admin.expect("ERROR") == "ERROR no-such-session no session \(target) is connected")
    }

    /// PROTOCOL.md: a reply precedes the events its command causes. The kicked session's
    /// `RELEASED ... reason=disconnect` and `LEFT` reach the admin's node from the leader,
    /// and the answer from the session's node; by hand (three nodes, `nc`), `LEFT` came
    /// first. Now the admin's output waits behind the KICK's answer.
    @Test func okKickComesBeforeTheEventsTheKickCauses() throws {
        let nodes = try ClusterTestNodes(["n1", "n2", "n3"])
        let leader = try #require(nodes.leader())
        let followers = nodes.followers(of: leader)
        let (adminNode, victimNode) = (followers[0], followers[1])
        let (root, _) = try nodes.member(adminNode, name: "root")
        let (carol, _) = try nodes.member(adminNode, name: "carol")
        let alice = try nodes.client(victimNode, name: "alice")
        alice.send("HELLO alice")
        let target = try Self.session(try alice.expect("OK HELLO"))
        alice.send("JOIN demo")
        _ = try alice.expect("OK JOIN demo")
        alice.send("DOWN demo b1")
        let fence = try #require(field("fence", of: try alice.expect("GRANTED demo b1")))
        _ = try root.expect("FIRED demo b1 owner=alice")
        _ = try carol.expect("FIRED demo b1 owner=alice")
        #expect(Self.knows(nodes, adminNode, victimNode))

        // The answer from alice's node is slow; the leader's events are not.
        nodes.hub.hold(framesTo: adminNode, from: victimNode)
        root.send("KICK \(target)")
        #expect(alice.waitForClose(), "the kicked session stays open")
        _ = try carol.expect("LEFT demo name=alice")
        nodes.hub.release(framesTo: adminNode)
        let lines = try root.readLines(through: "LEFT demo name=alice")
        #expect(
            lines.map { $0.replacingOccurrences(of: #" seq=\d+"#, with: "", options: .regularExpression) } == [
                "OK KICK \(target)", "RELEASED demo b1 reason=disconnect owner=alice fence=\(fence)", "LEFT demo name=alice session=\(target)",
            ], "\(lines)")
        root.send("PING after")
        #expect(try root.readLine() == "PONG after")
    }

    @Test func theSessionsNodeChecksTheAdminKeyOfEveryPanelItTouched() throws {
        let nodes = try ClusterTestNodes(["n1", "n2"], panels: [.demo, Self.keyed])
        let (leader, follower) = try nodes.leaderAndFollower(of: "k")
        let bob = try nodes.client(follower, name: "bob")
        bob.send("HELLO bob")
        let target = try Self.session(try bob.expect("OK HELLO"))
        bob.send("JOIN k")
        _ = try bob.expect("OK JOIN k")
        // Admin of demo (no keys) only: not enough for a member of k.
        let demoAdmin = try nodes.client(leader, name: "root")
        #expect(Self.knows(nodes, leader, follower))
        demoAdmin.send("KICK \(target)")
        #expect(try demoAdmin.expect("ERROR") == "ERROR forbidden KICK \(target) needs the admin key of panel k")
        bob.send("PING still")
        _ = try bob.expect("PONG still")
        let kAdmin = try nodes.client(leader, name: "keyholder")
        kAdmin.send("HELLO keyholder key=adm1n")
        _ = try kAdmin.expect("OK HELLO")
        kAdmin.send("KICK \(target)")
        #expect(try kAdmin.expect("OK KICK") == "OK KICK \(target)")
        #expect(bob.waitForClose())
    }

    /// A node that did not announce `kick` (an older version) is not sent the frame.
    @Test func aNodeThatDidNotAnnounceKickIsNotAsked() throws {
        let nodes = try ClusterTestNodes(["n1", "n2"], features: ["n2": [ClusterFeatures.panelState]])
        let bob = try nodes.client("n2", name: "bob")
        bob.send("HELLO bob")
        let target = try Self.session(try bob.expect("OK HELLO"))
        let admin = try nodes.client("n1", name: "root")
        #expect(Self.knows(nodes, "n1", "n2"))
        admin.send("KICK \(target)")
        let refusal = try admin.expect("ERROR")
        #expect(refusal.hasPrefix("ERROR unavailable \(target) is on node n2, whose version cannot be asked to KICK"), "\(refusal)")
        bob.send("PING still")
        _ = try bob.expect("PONG still")
    }

    /// A node that started a moment ago is not read yet by the others (registrations are
    /// read once a second): a KICK of a session it numbered waits for that read, where it
    /// was `no-such-session` for the first second of the node's life.
    @Test func aSessionOfANodeJustStartedIsKicked() throws {
        let nodes = try ClusterTestNodes(["n1"])
        let admin = try nodes.client("n1", name: "root")
        admin.send("PING ready")
        _ = try admin.expect("PONG ready")
        try nodes.start("n2")
        let bob = try nodes.client("n2", name: "bob")
        bob.send("HELLO bob")
        let target = try Self.session(try bob.expect("OK HELLO"))
        let known = nodes.context("n1")?.runtime.nodeAddresses()["n2"] != nil
        admin.send("KICK \(target)")
        #expect(try admin.expect("", timeout: 5) == "OK KICK \(target)", "n2 known to n1 before the KICK: \(known)")
        #expect(bob.waitForClose(), "the kicked session stays open")
    }

    /// A session number of no live node's range is no session.
    @Test func aSessionOfNoNodeIsNoSession() throws {
        let nodes = try ClusterTestNodes(["n1", "n2"])
        let admin = try nodes.client("n1", name: "root")
        admin.send("KICK s5")
        #expect(try admin.expect("ERROR") == "ERROR no-such-session no session s5 is connected")
    }
}
