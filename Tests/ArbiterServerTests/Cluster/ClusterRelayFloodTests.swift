import ArbiterCluster
import ArbiterClusterTestSupport
import ArbiterTestSupport
import Dispatch
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// Strangers on other addresses flood a leader's port with relay handshakes they never
/// finish, as a hostile tester did: before, they took every pending-handshake slot, no
/// node could link to the leader, and no press relayed through another node was granted.
@Suite("cluster mode: a relay handshake flood", .serialized)
struct ClusterRelayFloodTests {
    @Test func aNodesLinkComesUpThroughAFloodAndItsPressIsGranted() throws {
        // A JOIN that cannot reach its leader is refused after 5 s rather than 10.
        let nodes = try ClusterTestNodes(["n1", "n2"], sockets: true, joinWaitMs: 5_000)
        let (leader, follower) = try nodes.leaderAndFollower()
        let leaderNetwork = try #require(nodes.context(leader)?.network)
        let followerNetwork = try #require(nodes.context(follower)?.network)
        // The follower's link must come up during the flood for the test to mean anything.
        try #require(!followerNetwork.hasLinkUp(to: leader) && leaderNetwork.linkCount == 0)
        let started = DispatchTime.now().uptimeNanoseconds
        // 100 connections from ten addresses: more than all the slots there are.
        let flood = RelayHandshakeFlood(port: try #require(nodes.ports[leader]), sources: (2...11).map { "127.0.0.\($0)" }, perSource: 10)
        defer { flood.stop() }
        // Every slot the strangers may take is taken (without the reserve for nodes: all 64).
        let strangersShare = RelayOptions().maxPendingHandshakes - RelayOptions().handshakesReservedForNodes
        #expect(eventually { flood.held >= strangersShare && flood.refused > 0 }, "held \(flood.held), refused \(flood.refused)")

        // The follower links from 127.0.0.1, its advertised address, for bob's JOIN.
        let (bob, _) = try nodes.member(follower, name: "bob")
        bob.send("DOWN demo b1")
        #expect(try bob.expect("GRANTED demo b1").hasPrefix("GRANTED demo b1 fence="))
        #expect(followerNetwork.hasLinkUp(to: leader))
        #expect(flood.held >= strangersShare, "the flood lost its slots meanwhile: \(flood.held)")
        flood.stop()

        // Hundreds of refusals, a few lines: per kind (busy, too slow, left) at most the
        // first and two per 10 s (`RelayRefusalEpisodes`).
        let seconds = Int((DispatchTime.now().uptimeNanoseconds - started) / 1_000_000_000)
        let refusals = nodes.log.lines.filter {
            $0.hasPrefix("\(leader) ") && ($0.contains("msg=\"relay link refused\"") || $0.contains("msg=\"relay handshakes refused\""))
        }
        #expect(refusals.count <= 3 * (1 + 2 * (seconds / 10 + 1)), "\(refusals.count) lines in \(seconds) s: \(refusals.prefix(20))")
    }
}
