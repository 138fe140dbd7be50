import ArbiterCluster
import ArbiterClusterTestSupport
import ArbiterIO
import ArbiterCore
import ArbiterTestSupport
import ArbiterWire
import Foundation
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// `GET /api/panels` on any node shows a panel as its leader has it: a node that follows
/// the panel asks the leader's node (`RelayMessage.stateQuery`) and answers with what
/// comes back, in the request's place among pipelined requests. Before, a follower
/// showed every button idle with fence 0 while bob held b1 through it.
@Suite("cluster mode: /api/panels on every node", .serialized)
struct ClusterPanelStateTests {
    static func get(_ path: String = "/api/panels") -> String { "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" }

    /// Two nodes, the follower knowing that the leader's node answers for its panels (the
    /// registrations, features included, are read once a second while the watch is open).
    static func nodes(_ names: [String] = ["n1", "n2"], sockets: Bool = false) throws -> (ClusterTestNodes, leader: String, follower: String) {
        let nodes = try ClusterTestNodes(names, sockets: sockets)
        let (leader, follower) = try nodes.leaderAndFollower()
        let asks = eventually(seconds: 5) { nodes.context(follower)?.runtime.node(leader, supports: ClusterFeatures.panelState) == true }
        #expect(asks, "\(follower) never read \(leader)'s features")
        return (nodes, leader, follower)
    }

    static func panel(_ body: String) throws -> JSONValue {
        let json = try JSONParser.parse(Array(body.utf8))
        guard case .array(let panels)? = json["panels"], let demo = panels.first else { throw Failure(description: "no panels in \(body)") }
        return demo
    }

    static func button(_ id: String, of panel: JSONValue) -> JSONValue? {
        guard case .array(let buttons)? = panel["buttons"] else { return nil }
        return buttons.first { $0["id"] == .string(id) }
    }

    @Test(arguments: [false, true]) func aFollowerShowsWhatTheLeaderHas(sockets: Bool) throws {
        let (nodes, leader, follower) = try Self.nodes(sockets: sockets)
        let (alice, _) = try nodes.member(leader, name: "alice")
        let (bob, _) = try nodes.member(follower, name: "bob")
        bob.send("DOWN demo b1")
        let granted = try bob.expect("GRANTED demo b1")
        _ = try alice.expect("PRESSED demo b1 owner=bob")

        let here = try RawSocket(port: try #require(nodes.ports[follower]))
        here.send(Self.get())
        let seenHere = try here.readResponse()
        #expect(seenHere.head.hasPrefix("HTTP/1.1 200"))
        let there = try RawSocket(port: try #require(nodes.ports[leader]))
        there.send(Self.get())
        let seenThere = try there.readResponse()
        // The same document on both nodes: buttons, owners, members on both nodes, fence, seq.
        #expect(seenHere.body == seenThere.body)
        let demo = try Self.panel(seenHere.body)
        #expect(demo["members"] == .number("2"))
        #expect(Self.button("b1", of: demo)?["state"] == .string("pressed"))
        #expect(Self.button("b1", of: demo)?["owner"] == .string("bob"))
        let fence = try #require(granted.split(separator: " ").first { $0.hasPrefix("fence=") }?.dropFirst("fence=".count))
        #expect(demo["fence"] == .number(String(fence)), "\(granted) vs \(seenHere.body)")

        bob.send("UP demo b1")
        _ = try alice.expect("RELEASED demo b1 reason=up")
        here.send(Self.get())
        #expect(Self.button("b1", of: try Self.panel(try here.readResponse().body))?["state"] == .string("idle"))
    }

    /// Requests pipelined behind one that waits for the leader are answered after it, in
    /// order; `HEAD` gets the head alone.
    @Test func pipelinedRequestsKeepTheirOrder() throws {
        let (nodes, leader, follower) = try Self.nodes()
        let bob = try nodes.client(leader, name: "bob")
        bob.send("DOWN demo b2")
        _ = try bob.expect("GRANTED demo b2")
        let s = try RawSocket(port: try #require(nodes.ports[follower]))
        s.send(Self.get() + Self.get("/healthz") + "HEAD /api/panels HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" + Self.get())
        let first = try s.readResponse()
        #expect(Self.button("b2", of: try Self.panel(first.body))?["owner"] == .string("bob"))
        let second = try s.readResponse()
        #expect(second.body == "ok\n")
        let third = try s.readHead()
        #expect(third.hasPrefix("HTTP/1.1 200") && third.contains("Content-Type: application/json"))
        let fourth = try s.readResponse()
        #expect(Self.button("b2", of: try Self.panel(fourth.body))?["state"] == .string("pressed"), "\(fourth)")
    }

    /// A leader of a version without `panel-state` is never sent the query (it would
    /// close the link on a frame type it does not know): the follower shows its own view.
    @Test func aNodeThatDidNotAnnounceTheFeatureIsNotAsked() throws {
        let older: Set<String> = []
        let nodes = try ClusterTestNodes(["n1", "n2"], features: ["n1": older, "n2": older])
        let (leader, follower) = try nodes.leaderAndFollower()
        let queries = Locked(0)
        nodes.hub.observeSends { if case .stateQuery = $0 { queries.withLock { $0 += 1 } } }
        let bob = try nodes.client(leader, name: "bob")
        bob.send("DOWN demo b1")
        _ = try bob.expect("GRANTED demo b1")
        let s = try RawSocket(port: try #require(nodes.ports[follower]))
        s.send(Self.get())
        #expect(Self.button("b1", of: try Self.panel(try s.readResponse().body))?["state"] == .string("idle"))
        #expect(queries.withLock { $0 } == 0)
        // Announced (this version): asked.
        let (current, _, follower2) = try Self.nodes()
        current.hub.observeSends { if case .stateQuery = $0 { queries.withLock { $0 += 1 } } }
        let t = try RawSocket(port: try #require(current.ports[follower2]))
        t.send(Self.get())
        _ = try t.readResponse()
        #expect(queries.withLock { $0 } == 1)
    }

    /// A leader that does not answer (its frames lost, as from a node about to be
    /// declared dead) costs the request its deadline, then the follower's own view; the
    /// query is forgotten, and the connection serves the next request.
    @Test func aLeaderThatDoesNotAnswerCostsTheDeadlineOnly() throws {
        let (nodes, leader, follower) = try Self.nodes()
        let context = try #require(nodes.context(follower))
        nodes.hub.silence(framesFrom: leader, true)
        let s = try RawSocket(port: try #require(nodes.ports[follower]))
        s.send(Self.get() + Self.get("/healthz"))
        let first = try s.readResponse()
        #expect(first.head.hasPrefix("HTTP/1.1 200"))
        #expect(Self.button("b1", of: try Self.panel(first.body))?["state"] == .string("idle"))
        #expect(try s.readResponse().body == "ok\n")
        #expect(context.stateQueries.count == 0)
        nodes.hub.silence(framesFrom: leader, false)
        s.send(Self.get())
        #expect(try s.readResponse().head.hasPrefix("HTTP/1.1 200"))
    }

    /// A peer that hangs up while its answer is awaited leaves nothing behind.
    @Test func aPeerGoneBeforeItsAnswerIsForgotten() throws {
        let (nodes, leader, follower) = try Self.nodes()
        let context = try #require(nodes.context(follower))
        nodes.hub.silence(framesFrom: leader, true)
        do {
            let s = try RawSocket(port: try #require(nodes.ports[follower]))
            s.send(Self.get())
            #expect(eventually(seconds: 3) { context.stateQueries.count == 1 })
        }
        #expect(eventually(seconds: 5) { context.stateQueries.count == 0 })
        nodes.hub.silence(framesFrom: leader, false)
        let t = try RawSocket(port: try #require(nodes.ports[follower]))
        t.send(Self.get())
        #expect(try t.readResponse().head.hasPrefix("HTTP/1.1 200"))
    }

    /// `PANELS` counts the members of every node on any node, and its answer keeps its
    /// place among the session's answers (the PONG after it comes after it).
    @Test func panelsCountsTheMembersOfEveryNode() throws {
        let (nodes, leader, follower) = try Self.nodes()
        let (alice, _) = try nodes.member(leader, name: "alice")
        let (bob, _) = try nodes.member(follower, name: "bob")
        defer { withExtendedLifetime((alice, bob)) {} }
        for node in [follower, leader] {
            let carol = try nodes.client(node, name: "carol-\(node)")
            carol.send("PANELS")
            carol.send("PING after")
            let lines = try carol.readLines(through: "PONG")
            #expect(lines.count == 3 && lines[0].hasPrefix("PANEL demo buttons=5 members=2 "), "on \(node): \(lines)")
            #expect(lines.count == 3 && lines[1] == "OK PANELS count=1" && lines[2] == "PONG after", "on \(node): \(lines)")
        }
    }
}
