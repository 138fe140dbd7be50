import ArbiterCore
import ArbiterIO
import Testing
@testable import ArbiterCluster

/// A node announces what its relay understands at `/arbiter/nodes/<node>/features`, under
/// its lease, and reads the others' announcements with their registrations. Older nodes
/// read `/arbiter/nodes/` too: the announcement must not look like a node to them.
@Suite struct ClusterFeaturesTests {
    let clock = ManualClock.forCluster()
    let etcd: InMemoryEtcd

    init() {
        etcd = InMemoryEtcd(clock: clock.read)
    }

    func node(_ name: String, features: Set<String> = ClusterFeatures.all) -> ClusterNode {
        let node = ClusterNode(name: name, advertise: "127.0.0.1:700\(name.count)", panels: ["demo"], etcd: etcd, clock: clock.read)
        node.features = features
        return node
    }

    /// Steps `nodes` three times, 100 ms apart.
    func step(_ nodes: ClusterNode...) {
        for _ in 0..<3 {
            for node in nodes { node.step() }
            clock.advance(100)
        }
    }

    func value(_ key: String) throws -> (String, Int64)? {
        try etcd.range(.key(key)).kvs.first.map { ($0.valueText, $0.lease) }
    }

    @Test func eachNodeReadsWhatTheOthersAnnounced() throws {
        let new = node("a")
        let old = node("bb", features: [])
        step(new, old)
        let keys = ClusterKeys()
        let announced = try #require(try value(keys.features("a")))
        #expect(announced.0 == "grant-ended kick panel-state typed-events" && announced.1 == new.lease.leaseID)
        #expect(try value(keys.features("bb")) == nil, "a node with nothing to announce writes no key")
        #expect(new.registrations["a"]?.features == ["panel-state", "kick", "grant-ended", "typed-events"])
        #expect(new.registrations["bb"]?.features == [])
        #expect(old.registrations["a"]?.features == ["panel-state", "kick", "grant-ended", "typed-events"])
        // The announcement is no node: two live nodes, not three.
        #expect(new.liveNodes == 2 && Set(new.registrations.keys) == ["a", "bb"])
        #expect(keys.node(ofKey: keys.features("a")) == nil && keys.node(ofFeaturesKey: keys.features("a")) == "a")
    }

    /// An announcement left under an earlier lease of the node (about to expire with it)
    /// says nothing of the run registered now; the node puts its own again.
    @Test func onlyAnAnnouncementUnderTheRegistrationsLeaseCounts() throws {
        let keys = ClusterKeys()
        let stale = try etcd.grantLease(ttlSeconds: 30)
        _ = try etcd.txn(EtcdTxn(compare: [], success: [.put(keys.features("a"), "panel-state future-thing", lease: stale.id)]))
        let watcher = node("bb")
        let a = node("a", features: [])
        step(a, watcher)
        #expect(watcher.registrations["a"] != nil)
        #expect(watcher.registrations["a"]?.features == [], "the stale announcement was read as the new run's")
        // A node whose announcement is missing or says other things puts its own.
        let b = node("a")
        b.step()
        watcher.step()
        #expect(watcher.registrations["a"]?.features == ClusterFeatures.all)
        #expect(try value(keys.features("a"))?.1 == b.lease.leaseID)
    }

    @Test func valuesReadBackAsTheyWereWritten() {
        #expect(ClusterFeatures.value(["b", "a"]) == "a b")
        #expect(ClusterFeatures.parse("a  b ") == ["a", "b"])
        #expect(ClusterFeatures.parse("") == [])
    }
}
