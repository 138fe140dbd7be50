import ArbiterCluster
import ArbiterClusterTestSupport
import ArbiterCore
import ArbiterTestSupport
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// Terms and fences, on embedded nodes (`EmbeddedClusterNodes`): replies of two leaders
/// in command order, a leader told another leads stops before anything else, and fences
/// past a block etcd will not extend are refused, never handed out.
@Suite("cluster mode, embedded: term fencing")
struct EmbeddedTermFencingTests {
    static let second = PanelConfig(id: "second", title: "Second", buttons: PanelConfig.demo.buttons)

    /// One session's commands for two panels decided by two nodes, its own node one of
    /// them: the replies come in the order of the commands, and each panel's events after
    /// the reply that caused them. The other node hears the relayed commands only when
    /// the test lets it: until then nothing is written, not even the local panel's reply.
    @Test func repliesOfTwoLeadersComeInCommandOrder() throws {
        // No slack: the panels settle one on each node.
        var timing = EmbeddedClusterNodes.timing
        timing.spreadSlack = 0
        let nodes = try EmbeddedClusterNodes(["n1", "n2"], panels: [.demo, Self.second], timing: timing)
        var leaders: (demo: String?, second: String?) = (nil, nil)
        let spread = eventually {
            leaders = (nodes.leader(of: "demo", seconds: 0), nodes.leader(of: "second", seconds: 0))
            return leaders.demo != nil && leaders.second != nil && leaders.demo != leaders.second
        }
        try #require(spread, "the two panels never had two leaders: \(nodes.describe("demo")); \(nodes.describe("second"))")
        let here = try #require(leaders.second)
        let there = try #require(leaders.demo)
        let bob = try nodes.client(here, name: "bob")
        nodes.hub.hold(framesTo: there)
        bob.sendRaw("JOIN demo\nJOIN second\nDOWN demo b1\nDOWN second b1\nPING last\n")
        nodes.settle()
        let early = bob.drain()
        #expect(early.isEmpty, "written ahead of the relayed JOIN's answer: \(early)")
        nodes.hub.release(framesTo: there)
        let lines = try bob.readLines(through: "PONG last")
        let replies = lines.filter { $0.hasPrefix("OK ") || $0.hasPrefix("GRANTED") || $0.hasPrefix("PONG") }
            .map { $0.split(separator: " ").prefix(3).joined(separator: " ") }
        #expect(replies == ["OK JOIN demo", "OK JOIN second", "GRANTED demo b1", "GRANTED second b1", "PONG last"], "\(lines)")
        nodes.settle()
        let everything = lines + bob.drain()
        for panel in ["demo", "second"] {
            let granted = everything.firstIndex { $0.hasPrefix("GRANTED \(panel) b1") }
            let pressed = everything.firstIndex { $0.hasPrefix("PRESSED \(panel) b1") }
            #expect(granted != nil && pressed != nil && granted! < pressed!, "\(panel): \(everything)")
        }
    }

    /// News from etcd that another node leads may reach the panel before the runtime's own
    /// step-down: the leader stops right there, its members read their failover releases
    /// and the old term's snapshot before anything else, and the hold never fires.
    @Test func aLeaderToldAnotherNodeLeadsStopsFirst() throws {
        let nodes = try EmbeddedClusterNodes(["n1", "n2"])
        let (leader, follower) = try nodes.leaderAndFollower()
        let (alice, joined) = try nodes.member(leader, name: "alice")
        let term = try #require(field("term", of: joined).flatMap { Int64($0) })
        alice.send("DOWN demo sos")
        let fence = try #require(field("fence", of: try alice.expect("GRANTED demo sos")))
        let host = try #require(nodes.host(leader))
        host.queue.async { host.clusterPanel.leaderChanged(node: follower, address: "127.0.0.1:1", term: term + 1) }
        #expect(try alice.expect("RELEASED demo sos") == "RELEASED demo sos reason=failover owner=alice fence=\(fence)")
        let snapshot = try alice.readLines(through: "OK JOIN")
        #expect(snapshot.last.flatMap { field("term", of: $0) } == String(term))
        // Past the hold's 3 s.
        nodes.advance(milliseconds: 3_200)
        nodes.settle()
        let later = alice.drain()
        #expect(!later.contains { $0.hasPrefix("FIRED") }, "\(later)")
    }

    /// etcd refusing a leader's fence reservations (its space quota full): presses past
    /// the block in hand are refused with etcd's own reason, and work again, above the
    /// block, once etcd takes writes.
    @Test func pressesPastTheBlockSayWhyAndWorkAgainOnceEtcdTakesWrites() throws {
        let nodes = try EmbeddedClusterNodes(["n1"])
        #expect(nodes.leader() == "n1")
        let runtime = try #require(nodes.context("n1")?.runtime)
        let alice = try nodes.client("n1", name: "alice")
        alice.send("DOWN demo b1")
        #expect(try alice.readLine() == "GRANTED demo b1 fence=1")
        alice.send("UP demo b1")
        _ = try alice.expect("OK UP")
        nodes.controlViews["n1"]?.refuseWrites(ClusterFenceTroubleTests.noSpace)
        // The first block holds fences 1-1000; its next one is asked for at 800.
        alice.sendRaw(String(repeating: "DOWN demo b1\nUP demo b1\n", count: 999) + "PING used\n")
        let answers = try alice.readLines(through: "PONG used", limit: 2_000)
        #expect(answers.filter { $0.hasPrefix("GRANTED demo b1") }.count == 999)
        #expect(answers.contains("GRANTED demo b1 fence=1000"))
        // The reservation asked for at 800 has failed once (an event: its log line).
        let context = try #require(nodes.context("n1"))
        #expect(eventually { context.fenceTrouble(of: "demo") != nil }, "\(nodes.describe("demo"))")
        alice.send("DOWN demo b1")
        #expect(
            try alice.readLine()
                == "ERROR unavailable panel demo cannot reserve its next block of fences in etcd (etcd error 8: etcdserver: mvcc: database space exceeded); nothing was done, and presses work again once etcd takes it (this node's log says more)"
        )
        #expect(try nodes.get("/metrics", on: "n1").contains("arbiter_cluster_fence_reservations_failing 1\n"))
        nodes.controlViews["n1"]?.refuseWrites(nil)
        // A DOWN past the block asks again, at most every 500 ms; refused while it is under way.
        nodes.advance(milliseconds: 500)
        alice.send("DOWN demo b1")
        var granted = try alice.readLine()
        if !granted.hasPrefix("GRANTED") {
            #expect(granted.hasPrefix("ERROR unavailable panel demo "), "\(granted)")
            #expect(eventually { (runtime.canDecide("demo")?.last ?? 0) > 1000 }, "\(nodes.describe("demo"))")
            alice.send("DOWN demo b1")
            granted = try alice.readLine()
        }
        #expect((field("fence", of: granted).flatMap(UInt64.init) ?? 0) > 1000, "\(granted)")
        #expect(try nodes.get("/metrics", on: "n1").contains("arbiter_cluster_fence_reservations_failing 0\n"))
    }
}
