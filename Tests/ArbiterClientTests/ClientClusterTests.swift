import ArbiterClient
import Foundation
import Testing

/// The client against three nodes in cluster mode on the in-memory etcd.
@Suite("client: cluster failover", .serialized)
struct ClientClusterTests {
    /// The leader of the panel dies while the client, on another node, holds a button: it
    /// reads `RELEASED reason=failover` (no seq) and the new leader's snapshot, and its next
    /// press (retried through `ERROR unavailable` while there is no leader) gets a fence
    /// above every earlier one.
    @Test func theLeaderDyingEndsTheGrantAndTheNextPressGetsAHigherFence() async throws {
        let nodes = try ClusterNodes(["n1", "n2", "n3"])
        let leader = try nodes.leader()
        let others = ["n1", "n2", "n3"].filter { $0 != leader }
        let client = try await ArbiterClient.connect(
            hosts: others.map { nodes.host($0) }, name: "kiosk-c", options: ClientReconnectTests.fast)
        let panel = try await client.join("demo")
        #expect(panel.state.term != nil)
        let recorder = EventRecorder(panel.events)
        guard case .granted(let before) = try await panel.down("b1") else { Issue.record("not granted"); return }

        nodes.crash(leader)
        let released = try await recorder.expect("RELEASED reason=failover") {
            if case .released("b1", _, _, _, _) = $0 { return true } else { return false }
        }
        #expect(released == .released(button: "b1", reason: "failover", owner: "kiosk-c", fence: before, seq: nil))
        try await recorder.expect("the new leader's snapshot") {
            if case .resynced(let state, .pushedByServer) = $0 { return state.term != nil && state[button: "b1"]?.phase == .idle }
            return false
        }
        #expect(try await panel.up("b1") == .alreadyEnded(reason: "failover"))
        guard case .granted(let after) = try await panel.down("b1") else { Issue.record("not granted after the failover"); return }
        #expect(after > before)
    }

    /// The client's own node dies: it moves to the next host and joins again there.
    @Test func theClientsNodeDyingMovesItToTheNextHost() async throws {
        let nodes = try ClusterNodes(["n1", "n2", "n3"])
        let leader = try nodes.leader()
        let others = ["n1", "n2", "n3"].filter { $0 != leader }
        let client = try await ArbiterClient.connect(
            hosts: others.map { nodes.host($0) } + [nodes.host(leader)], name: "kiosk-d", options: ClientReconnectTests.fast)
        let panel = try await client.join("demo")
        let recorder = EventRecorder(panel.events)
        #expect(client.host == nodes.host(others[0]))

        nodes.crash(others[0])
        try await recorder.expect("disconnected") { if case .disconnected = $0 { return true } else { return false } }
        let back = try await recorder.expect("resynced") { if case .resynced(_, .reconnected) = $0 { return true } else { return false } }
        #expect(back.description.contains(nodes.host(others[1])), "\(back)")
        guard case .granted = try await panel.down("b2") else { Issue.record("not granted on the next node"); return }
    }
}
