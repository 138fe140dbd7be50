import ArbiterCore
import ArbiterIO
import Testing
@testable import ArbiterCluster

@Suite struct InMemoryEtcdTests {
    let clock = ManualClock.forCluster()

    @Test func createIffAbsentWinsOnceAndTheTermIsTheCreateRevision() throws {
        let etcd = InMemoryEtcd(clock: clock.read)
        let lease = try etcd.grantLease(ttlSeconds: 3)
        let campaign = EtcdTxn(
            compare: [.createRevision("/k", .equal, 0)],
            success: [.put("/k", "a", lease: lease.id)],
            failure: [.range("/k")])
        let first = try etcd.txn(campaign)
        #expect(first.succeeded)
        let second = try etcd.txn(campaign)
        #expect(!second.succeeded)
        let holder = try #require(second.rangeResult(0).first)
        #expect(holder.createRevision == first.revision)
        #expect(holder.valueText == "a")
        #expect(second.revision == first.revision, "a failed txn writes nothing")
    }

    @Test func compareRulesOnMissingKeysFollowEtcd() throws {
        let etcd = InMemoryEtcd(clock: clock.read)
        #expect(try etcd.txn(EtcdTxn(compare: [.modRevision("/none", .equal, 0)], success: [])).succeeded)
        #expect(try !etcd.txn(EtcdTxn(compare: [.value("/none", .equal, "")], success: [])).succeeded)
        try etcd.put("/v", "5")
        #expect(try etcd.txn(EtcdTxn(compare: [.value("/v", .equal, "5")], success: [])).succeeded)
        #expect(try !etcd.txn(EtcdTxn(compare: [.value("/v", .notEqual, "5")], success: [])).succeeded)
        #expect(try etcd.txn(EtcdTxn(compare: [.modRevision("/v", .greater, 1)], success: [])).succeeded)
    }

    @Test func aLeaseExpiresOnTheClockAndTakesItsKeysAtOneNewRevision() throws {
        let etcd = InMemoryEtcd(clock: clock.read)
        let lease = try etcd.grantLease(ttlSeconds: 3)
        try etcd.put("/a", "1", lease: lease.id)
        try etcd.put("/b", "1", lease: lease.id)
        let watch = try etcd.watch(.prefix("/"), startRevision: 0)
        let before = etcd.revision
        clock.advance(2_999)
        #expect(try etcd.get("/a") != nil)
        clock.advance(1)
        #expect(try etcd.get("/a") == nil)
        #expect(etcd.revision == before + 1)
        let events = try watch.next(timeoutMilliseconds: 0)
        #expect(events.map(\.kind) == [.delete, .delete])
        #expect(events.map(\.kv.keyText) == ["/a", "/b"])
        #expect(events.allSatisfy { $0.kv.modRevision == before + 1 })
        #expect(throws: EtcdError.leaseNotFound) { try etcd.keepAlive(lease: lease.id) }
    }

    @Test func aKeepaliveRestartsTheTTL() throws {
        let etcd = InMemoryEtcd(clock: clock.read)
        let lease = try etcd.grantLease(ttlSeconds: 3)
        for _ in 0..<10 {
            clock.advance(2_000)
            _ = try etcd.keepAlive(lease: lease.id)
        }
        #expect(etcd.leaseIsAlive(lease.id))
        clock.advance(3_000)
        #expect(!etcd.leaseIsAlive(lease.id))
    }

    @Test func aPutUnderAMissingLeaseIsRefusedAndWritesNothing() throws {
        let etcd = InMemoryEtcd(clock: clock.read)
        let revision = etcd.revision
        #expect(throws: EtcdError.leaseNotFound) { try etcd.put("/a", "1", lease: 42) }
        #expect(etcd.revision == revision)
        #expect(try etcd.get("/a") == nil)
    }

    @Test func withoutAMajorityEveryCallIsUnavailable() throws {
        let etcd = InMemoryEtcd(clock: clock.read)
        etcd.isAvailable = false
        #expect(throws: EtcdError.self) { try etcd.grantLease(ttlSeconds: 3) }
        do {
            _ = try etcd.range(.key("/a"))
            Issue.record("expected unavailable")
        } catch {
            guard case .unavailable = error else { Issue.record("got \(error)"); return }
        }
        etcd.isAvailable = true
        #expect(try etcd.range(.key("/a")).kvs.isEmpty)
    }

    @Test func prefixRangesAreEtcdsPrefixForm() {
        let range = EtcdKeyRange.prefix("/arbiter/panels/")
        #expect(range.rangeEnd == Array("/arbiter/panels0".utf8))
        #expect(range.contains(Array("/arbiter/panels/demo/leader".utf8)))
        #expect(!range.contains(Array("/arbiter/nodes/n1".utf8)))
        #expect(!range.contains(Array("/arbiter/panels0".utf8)))
    }
}
