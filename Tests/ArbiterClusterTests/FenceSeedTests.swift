import ArbiterCore
import ArbiterIO
import Testing
@testable import ArbiterCluster

@Suite struct FenceSeedTests {
    let clock = ManualClock.forCluster()
    let keys = ClusterKeys()

    @Test func anAbsentKeyIsCreatedAtTheJournalsReservation() throws {
        let etcd = InMemoryEtcd(clock: clock.read)
        let raised = try FenceSeed.seed(["demo": 5000, "lobby": 0], etcd: etcd, keys: keys)
        #expect(raised == ["demo": 5000])
        #expect(try etcd.get(keys.fence("demo"))?.valueText == "5000")
        #expect(try etcd.get(keys.fence("lobby")) == nil)
    }

    @Test func aHigherKeyIsLeftAloneAndALowerOneRaised() throws {
        let etcd = InMemoryEtcd(clock: clock.read)
        try etcd.put(keys.fence("demo"), "9000")
        try etcd.put(keys.fence("lobby"), "1000")
        let raised = try FenceSeed.seed(["demo": 5000, "lobby": 3000], etcd: etcd, keys: keys)
        #expect(raised == ["lobby": 3000])
        #expect(try etcd.get(keys.fence("demo"))?.valueText == "9000")
        #expect(try etcd.get(keys.fence("lobby"))?.valueText == "3000")
    }

    @Test func aKeyThatChangedSinceItWasReadFailsTheCompare() throws {
        let etcd = InMemoryEtcd(clock: clock.read)
        try etcd.put(keys.fence("demo"), "1000")
        let read = try etcd.get(keys.fence("demo"))
        let seed = try #require(try FenceSeed(current: read, journalFence: 3000, fenceKey: keys.fence("demo")))
        try etcd.put(keys.fence("demo"), "8000")
        #expect(try !etcd.txn(seed.txn).succeeded)
        #expect(try etcd.get(keys.fence("demo"))?.valueText == "8000")
    }

    @Test func theFirstLeaderAfterSeedingStartsAboveTheJournal() throws {
        let etcd = InMemoryEtcd(clock: clock.read)
        _ = try FenceSeed.seed(["demo": 42_000], etcd: etcd, keys: keys)
        let node = ClusterNode(name: "n1", advertise: "127.0.0.1:7001", panels: ["demo"], etcd: etcd, clock: clock.read)
        for _ in 0..<10 where node.canDecide("demo") == nil {
            node.step()
            clock.advance(100)
        }
        let block = try #require(node.canDecide("demo"))
        #expect(block.first == 42_001)
    }

    @Test func aFenceKeyThatIsNotANumberIsReported() throws {
        let etcd = InMemoryEtcd(clock: clock.read)
        try etcd.put(keys.fence("demo"), "garbage")
        #expect(throws: EtcdError.self) { try FenceSeed.seed(["demo": 1], etcd: etcd, keys: keys) }
    }
}
