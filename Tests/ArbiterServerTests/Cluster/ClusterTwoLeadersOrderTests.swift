import ArbiterClusterTestSupport
import ArbiterCore
import ArbiterTestSupport
import Foundation
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// One session's commands for two panels decided by two nodes, its own node one of them:
/// the replies still come in the order of the commands (PROTOCOL.md), and each panel's
/// events after the reply that caused them. Before, the panel decided here was answered
/// at once, ahead of a relayed command sent before it.
@Suite("cluster mode: replies of two leaders in command order", .serialized)
struct ClusterTwoLeadersOrderTests {
    static let second = PanelConfig(id: "second", title: "Second", buttons: PanelConfig.demo.buttons)

    @Test func repliesOfTwoLeadersComeInCommandOrder() throws {
        // No slack: the panels settle one on each node.
        var timing = ClusterTestNodes.timing
        timing.spreadSlack = 0
        let nodes = try ClusterTestNodes(["n1", "n2"], panels: [.demo, Self.second], timing: timing)
        var leaders: (demo: String?, second: String?) = (nil, nil)
        let spread = eventually(seconds: 15) {
            leaders = (nodes.leader(of: "demo", seconds: 1), nodes.leader(of: "second", seconds: 1))
            return leaders.demo != nil && leaders.second != nil && leaders.demo != leaders.second
        }
        try #require(spread, "the two panels never had two leaders: \(nodes.describe("demo")); \(nodes.describe("second"))")
        let here = try #require(leaders.second)
        let there = try #require(leaders.demo)
        let bob = try nodes.client(here, name: "bob")
        // demo is decided 200 ms away; second right here.
        nodes.hub.delay(framesTo: there, milliseconds: 200)
        bob.sendRaw(Array("JOIN demo\nJOIN second\nDOWN demo b1\nDOWN second b1\nPING last\n".utf8))
        let lines = try bob.readLines(through: "PONG last", timeout: 10)
        let replies = lines.filter { $0.hasPrefix("OK ") || $0.hasPrefix("GRANTED") || $0.hasPrefix("PONG") }
            .map { $0.split(separator: " ").prefix(3).joined(separator: " ") }
        #expect(replies == ["OK JOIN demo", "OK JOIN second", "GRANTED demo b1", "GRANTED second b1", "PONG last"], "\(lines)")
        // Each panel's PRESSED comes after its own GRANTED.
        let everything = lines + bob.drain(for: 0.5)
        for panel in ["demo", "second"] {
            let granted = everything.firstIndex { $0.hasPrefix("GRANTED \(panel) b1") }
            let pressed = everything.firstIndex { $0.hasPrefix("PRESSED \(panel) b1") }
            #expect(granted != nil && pressed != nil && granted! < pressed!, "\(panel): \(everything)")
        }
    }
}
