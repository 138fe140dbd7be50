import ArbiterCluster
import ArbiterClusterTestSupport
import ArbiterCore
import ArbiterTestSupport
import Testing

@testable import ArbiterServer

/// A node learns a panel's leader from its election key, and where that leader is from
/// its registration, which it may read up to a second later (a node that campaigned at
/// its start and lost to one it had not seen registered). Before, a press relayed in that
/// window was dropped at the dial and answered "it may or may not have been done".
@Suite("cluster mode: a leader whose address is not known yet", .serialized)
struct ClusterLeaderAddressTests {
    @Test func aPressForALeaderNotReadYetIsRefusedWithNothingDone() throws {
        let nodes = try ClusterTestNodes([], sockets: true)
        // n9 holds demo's election key but never registered: n1 knows it leads, not where.
        let lease = try nodes.etcd.with { e throws(EtcdError) in try e.grantLease(ttlSeconds: 60) }
        _ = try nodes.etcd.with { e throws(EtcdError) in
            try e.txn(EtcdTxn(compare: [], success: [.put(ClusterKeys().leader("demo"), "n9", lease: lease.id)]))
        }
        try nodes.start("n1")
        let host = try #require(nodes.servers["n1"]?.stateForTesting?.panelsByID["demo"])
        #expect(eventually(seconds: 5) { host.queue.sync { host.clusterState.leaderNode == "n9" } })

        let alice = try nodes.client("n1", name: "alice")
        alice.send("DOWN demo b1")
        alice.send("PING after")
        let lines = try alice.readLines(through: "PONG")
        #expect(
            lines == [
                "ERROR unavailable panel demo's leader n9 is not known to this node yet (its address is read from etcd within a second); nothing was done, try again in a second or two",
                "PONG after",
            ])
        #expect(nodes.context("n1")?.relayedOut.load(ordering: .relaxed) == 0, "a frame went out for a leader with no address")
    }
}
