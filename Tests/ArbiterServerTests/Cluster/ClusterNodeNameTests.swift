import ArbiterCluster
import ArbiterClusterTestSupport
import ArbiterCore
import ArbiterIO
import ArbiterTestSupport
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// A second live process under a node's name is refused at start; a dead process's
/// registration at another address is waited out, and a node's own earlier run is no
/// obstacle (ClusterTestNodes' lease: TTL 2 s, so the wait is at most 4 s).
@Suite("cluster mode: one process per node name", .serialized)
struct ClusterNodeNameTests {
    func server(_ name: String, advertise: String, _ etcd: SharedEtcd) -> ArbiterServer {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.logLevel = .off
        configuration.cluster = ClusterSetup(
            node: name, advertise: advertise, key: Array("k".utf8), control: etcd.view(), lease: etcd.view(), endpointsDescription: "in-memory",
            timing: ClusterTestNodes.timing, stepIntervalMilliseconds: 50, clock: SystemClock.boot)
        return ArbiterServer(configuration: configuration)
    }

    func registered(_ name: String, in etcd: SharedEtcd) -> String? {
        try? etcd.with { e throws(EtcdError) in try e.range(.key(ClusterKeys().node(name))) }.kvs.first?.valueText
    }

    @Test func aSecondLiveNodeUnderTheSameNameIsRefused() throws {
        let etcd = SharedEtcd()
        let first = server("n1", advertise: "10.0.0.1:7070", etcd)
        try first.start()
        defer { first.stop() }
        #expect(eventually { registered("n1", in: etcd) == "10.0.0.1:7070" })
        let second = server("n1", advertise: "10.0.0.2:7070", etcd)
        do {
            try second.start()
            second.stop()
            Issue.record("a second node n1 started")
        } catch let refusal as ClusterStartFailure {
            #expect(refusal.message.hasPrefix("node name n1 is in use by a live node at 10.0.0.1:7070"), "\(refusal.message)")
        }
        #expect(second.port == 0, "a refused node never listens")
        #expect(registered("n1", in: etcd) == "10.0.0.1:7070", "the live node's registration is untouched")
    }

    @Test func aDeadProcesssRegistrationAtAnotherAddressIsWaitedOut() throws {
        let etcd = SharedEtcd()
        // What a process killed with -9 leaves: its key, under a lease nobody renews.
        let lease = try etcd.with { e throws(EtcdError) in try e.grantLease(ttlSeconds: 1) }
        _ = try etcd.with { e throws(EtcdError) in
            try e.txn(EtcdTxn(compare: [], success: [.put(ClusterKeys().node("n1"), "10.0.0.9:7070", lease: lease.id)]))
        }
        let node = server("n1", advertise: "10.0.0.1:7070", etcd)
        try node.start()
        defer { node.stop() }
        #expect(node.port != 0)
        #expect(eventually { registered("n1", in: etcd) == "10.0.0.1:7070" })
    }

    @Test func anEarlierRunAtThisNodesOwnAddressIsNoObstacle() throws {
        let etcd = SharedEtcd()
        let first = server("n1", advertise: "10.0.0.1:7070", etcd)
        try first.start()
        #expect(eventually { registered("n1", in: etcd) == "10.0.0.1:7070" })
        // Not a clean stop: the key stays until its lease runs out, as after a crash.
        first.stop()
        #expect(registered("n1", in: etcd) == "10.0.0.1:7070")
        let again = server("n1", advertise: "10.0.0.1:7070", etcd)
        try again.start()
        defer { again.stop() }
        #expect(again.port != 0)
    }
}
