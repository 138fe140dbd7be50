import ArbiterCore
import ArbiterTestSupport
import ArbiterWire
import Foundation
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// Which node leads a panel is shown where panels are listed, in cluster mode only:
/// `PANELS` lines end with `leader=<node>`, `/api/panels` objects carry `"leader"`, and
/// the kiosk index says "led by <node>". A single node's output stays as it was.
@Suite("cluster mode: PANELS and /api/panels name each panel's leader", .serialized)
struct ClusterPanelLeaderTests {
    @Test func panelsEndsWithTheLeaderOnEveryNode() throws {
        let (nodes, leader, follower) = try ClusterPanelStateTests.nodes()
        for node in [leader, follower] {
            let carol = try nodes.client(node, name: "carol-\(node)")
            carol.send("PANELS")
            let lines = try carol.readLines(through: "OK PANELS")
            #expect(lines == ["PANEL demo buttons=5 members=0 title=\"Demo\" leader=\(leader)", "OK PANELS count=1"], "on \(node)")
            carol.send(#"{"cmd":"panels","id":1}"#)
            let json = try carol.readLine()
            #expect(json == #"{"type":"panel","panel":"demo","buttons":5,"members":0,"title":"Demo","leader":"\#(leader)","id":1}"#, "on \(node)")
        }
    }

    /// The follower's document is the leader's answer with the field added, so both
    /// nodes serve the same bytes.
    @Test func apiPanelsNamesTheLeaderOnEveryNode() throws {
        let (nodes, leader, follower) = try ClusterPanelStateTests.nodes()
        var bodies: [String] = []
        for node in [leader, follower] {
            let s = try RawSocket(port: try #require(nodes.ports[node]))
            s.send(ClusterPanelStateTests.get())
            let body = try s.readResponse().body
            #expect(try ClusterPanelStateTests.panel(body)["leader"] == .string(leader), "on \(node): \(body)")
            bodies.append(body)
        }
        #expect(bodies.count == 2 && bodies[0] == bodies[1])
    }

    @Test func theKioskIndexSaysWhoLeads() throws {
        let (nodes, leader, follower) = try ClusterPanelStateTests.nodes()
        let s = try RawSocket(port: try #require(nodes.ports[follower]))
        s.send(ClusterPanelStateTests.get("/"))
        let page = try s.readResponse().body
        #expect(page.contains("demo · 5 buttons · led by \(leader)</span>"), "\(page)")
    }

    /// Between a leader's key running out and the next election's result a node knows
    /// of no leader (staged here by forgetting it): `leader=-`, `"leader":null`, and the
    /// index says nothing of a leader.
    @Test func aPanelWithNoLeaderKnownSaysSo() throws {
        let (nodes, _, follower) = try ClusterPanelStateTests.nodes()
        let host = try #require(nodes.servers[follower]?.stateForTesting?.panelsByID["demo"])
        host.queue.sync { host.clusterState.leader.node = nil }
        let carol = try nodes.client(follower, name: "carol")
        carol.send("PANELS")
        #expect(try carol.readLines(through: "OK PANELS").first == "PANEL demo buttons=5 members=0 title=\"Demo\" leader=-")
        let s = try RawSocket(port: try #require(nodes.ports[follower]))
        s.send(ClusterPanelStateTests.get() + ClusterPanelStateTests.get("/"))
        #expect(try ClusterPanelStateTests.panel(try s.readResponse().body)["leader"] == .null)
        let page = try s.readResponse().body
        #expect(page.contains("demo · 5 buttons</span>") && !page.contains("led by"), "\(page)")
    }

    /// A single node has no leaders: its lines and documents stay byte for byte as before.
    @Test func aSingleNodeNamesNoLeader() throws {
        let server = try TestServer()
        let carol = try server.client(name: "carol")
        carol.send("PANELS")
        #expect(try carol.readLines(through: "OK PANELS") == ["PANEL demo buttons=5 members=0 title=\"Demo\"", "OK PANELS count=1"])
        let s = try RawSocket(port: server.port)
        s.send(ClusterPanelStateTests.get() + ClusterPanelStateTests.get("/"))
        let body = try s.readResponse().body
        #expect(try ClusterPanelStateTests.panel(body)["leader"] == nil, "\(body)")
        #expect(!body.contains("leader"))
        #expect(!(try s.readResponse().body).contains("led by"))
    }
}
