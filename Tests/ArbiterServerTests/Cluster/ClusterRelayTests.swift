import ArbiterCore
import ArbiterTestSupport
import Foundation
import Testing

@testable import ArbiterServer

/// The wiring of cluster mode, in process: real servers on loopback, one in-memory etcd.
@Suite("cluster mode wired into the server", .serialized)
struct ClusterRelayTests {
    @Test func aPressOnAFollowerIsDecidedByTheLeader() throws {
        let nodes = try ClusterTestNodes(["n1", "n2"])
        let leader = try #require(nodes.leader())
        let follower = try #require(nodes.followers(of: leader).first)
        let (here, hereJoin) = try nodes.member(leader, name: "alice")
        let (there, thereJoin) = try nodes.member(follower, name: "bob")
        #expect(field("term", of: hereJoin) != nil)
        #expect(field("term", of: hereJoin) == field("term", of: thereJoin))
        there.send("DOWN demo b1")
        let granted = try there.expect("GRANTED demo b1")
        let pressedThere = try there.expect("PRESSED demo b1 owner=bob")
        let pressedHere = try here.expect("PRESSED demo b1 owner=bob")
        #expect(pressedThere == pressedHere)
        #expect(field("fence", of: granted) == field("fence", of: pressedHere))
        // The leader's own member is refused by the relayed grant.
        here.send("DOWN demo b2")
        #expect(try here.expect("DENIED demo b2").contains("owner=bob"))
        there.send("UP demo b1")
        #expect(try there.expect("OK UP demo b1") == "OK UP demo b1")
        #expect(try here.expect("RELEASED demo b1").contains("reason=up"))
    }
}

/// Start-up, before listening: the config check against the cluster's, and etcd down.
@Suite("cluster mode: start-up checks")
struct ClusterStartUpTests {
    func setup(_ name: String, _ etcd: LockedEtcd.View) -> ClusterSetup {
        ClusterSetup(
            node: name, advertise: "127.0.0.1:1", key: Array("k".utf8), control: etcd, lease: etcd, endpointsDescription: "http://e1:2379",
            timing: ClusterTestNodes.timing)
    }

    @Test func aNodeWhoseConfigDiffersIsRefusedNamingTheDifference() throws {
        let etcd = LockedEtcd()
        var first = ServerConfiguration()
        first.port = 0
        first.logLevel = .off
        first.cluster = setup("n1", etcd.view())
        let n1 = ArbiterServer(configuration: first)
        try n1.start()
        defer { n1.stop() }
        var second = first
        second.cluster = setup("n2", etcd.view())
        var panel = PanelConfig.demo
        panel.buttons[3].holdMs = 2000
        second.panels = [panel]
        let n2 = ArbiterServer(configuration: second)
        #expect(throws: ClusterStartFailure.self) { try n2.start() }
        do {
            try n2.start()
        } catch let refusal as ClusterStartFailure {
            #expect(refusal.message == "node n2's config differs from the cluster's: panels[0].buttons[3].hold_ms 2000 vs 3000")
        }
        #expect(n2.port == 0, "a refused node never listens")
    }

    @Test func etcdNotAnsweringAtStartIsSaidWithTheEndpoints() throws {
        let etcd = LockedEtcd()
        let view = etcd.view()
        view.setFailing(true)
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.logLevel = .off
        configuration.cluster = setup("n1", view)
        let server = ArbiterServer(configuration: configuration)
        do {
            try server.start()
            Issue.record("started without etcd")
        } catch let refusal as ClusterStartFailure {
            #expect(refusal.message.hasPrefix("etcd did not answer at http://e1:2379 ("))
        }
    }
}
