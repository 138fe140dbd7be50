import Testing

@testable import ArbiterCluster

@Suite struct NodeNameCheckTests {
    @Test func aNameNobodyRegisteredIsFree() {
        #expect(NodeNameCheck.verdict(registered: nil, advertise: "a:1", waitedMilliseconds: 0, ttlSeconds: 3) == .free)
    }

    @Test func thisNodesOwnAddressIsAnEarlierRunOfIt() {
        #expect(NodeNameCheck.verdict(registered: "a:1", advertise: "a:1", waitedMilliseconds: 0, ttlSeconds: 3) == .free)
    }

    @Test func anotherAddressIsWaitedForUntilTheTTLAndASecondHavePassed() {
        #expect(NodeNameCheck.verdict(registered: "b:1", advertise: "a:1", waitedMilliseconds: 0, ttlSeconds: 3) == .wait)
        #expect(NodeNameCheck.verdict(registered: "b:1", advertise: "a:1", waitedMilliseconds: 3_999, ttlSeconds: 3) == .wait)
        #expect(NodeNameCheck.verdict(registered: "b:1", advertise: "a:1", waitedMilliseconds: 4_000, ttlSeconds: 3) == .inUse(address: "b:1"))
    }
}
