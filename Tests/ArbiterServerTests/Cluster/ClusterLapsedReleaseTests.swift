import ArbiterCluster
import ArbiterClusterTestSupport
import ArbiterCore
import ArbiterTestSupport
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// A node whose lease lapsed (its own safe deadline passed: cut off from etcd, paused)
/// stops relaying presses, but etcd may keep it, and its sessions' grants, a while
/// longer. Before, a release was refused too: the lifted finger was lost, and a hold
/// fired (or a talk ran to its timeout) after the user had let go.
@Suite("cluster mode: a release while the node's lease has lapsed", .serialized)
struct ClusterLapsedReleaseTests {
    /// The node stops trusting its lease 2 s after its last answered keepalive; etcd keeps
    /// it until 3 s. The release comes in between.
    static let timing = ClusterTiming(ttlSeconds: 3, keepAliveIntervalMilliseconds: 100, safetyMarginMilliseconds: 1000)
    static let panel = PanelConfig(
        id: "demo", title: "Lapse", buttons: [ButtonConfig(id: "sos", kind: .hold, group: "emergency", holdMs: 4000, progressMs: 0)])

    /// A JOIN on a node that cannot reach etcd waits the join wait, then says why: before,
    /// it named the leader as unreachable, and by hand (two of three etcd members killed)
    /// that sent the operator to a leader that was fine.
    @Test func aJoinOnANodeWhoseLeaseLapsedIsRefusedNamingEtcd() throws {
        let nodes = try ClusterTestNodes(["n1", "n2"], panels: [Self.panel], timing: Self.timing, joinWaitMs: 1_000)
        let (leader, follower) = try nodes.leaderAndFollower()
        let context = try #require(nodes.context(follower))
        nodes.leaseViews[follower]?.setFailing(true)
        defer { nodes.leaseViews[follower]?.setFailing(false) }
        #expect(eventually(seconds: 3) { context.isLapsed }, "the follower's lease never lapsed")
        // The operator can see it: /healthz stays 200 ok, /metrics says the lease lapsed.
        for (node, lapsed) in [(follower, 1), (leader, 0)] {
            let metrics = try RawSocket(port: try #require(nodes.ports[node]))
            metrics.send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let page = try metrics.readResponse().body
            #expect(page.contains("arbiter_cluster_lease_lapsed \(lapsed)\n"), "\(node): \(page)")
        }
        let bob = try nodes.client(follower, name: "bob")
        bob.send("JOIN demo")
        let answer = try bob.expect("ERROR", timeout: 5)
        #expect(
            answer
                == "ERROR unavailable panel demo could not be joined for 1 s: this node cannot reach etcd right now (its lease lapsed: etcd has no majority, or this node is cut off from it); nothing was done, JOIN again later",
            "\(answer)")
        bob.send("PING after")
        #expect(try bob.readLine() == "PONG after")
    }
}
