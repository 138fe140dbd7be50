import ArbiterCore
import Testing
@testable import ArbiterCluster

@Suite struct DecisionTableTests {
    let timing = ClusterTiming.standard
    let start = Instant(milliseconds: 10_000)

    func held(id: Int64, sentAt: Instant) -> NodeLeaseStateMachine {
        var lease = NodeLeaseStateMachine(timing: timing)
        lease.grantSent(now: sentAt)
        _ = lease.granted(EtcdLease(id: id, ttlSeconds: 3))
        return lease
    }

    @Test func decidesOnlyUnderTheLeaseItWonWithAndBeforeItsDeadline() {
        var table = DecisionTable()
        let lease = held(id: 1, sentAt: start)
        let block = FenceBlock(term: 5, first: 1, last: 1000)
        table.start("p", block: block, lease: 1)
        #expect(table.canDecide("p", lease: lease, now: start + 2_499) == block)
        #expect(table.canDecide("p", lease: lease, now: start + 2_500) == nil)
        #expect(table.canDecide("q", lease: lease, now: start) == nil)
    }

    @Test func aLeaseLostAndGrantedAgainDoesNotCarryTheOldTermOver() {
        var table = DecisionTable()
        table.start("p", block: FenceBlock(term: 5, first: 1, last: 1000), lease: 1)
        // Lease 1 was lost and lease 2 granted before anyone expired the table.
        let second = held(id: 2, sentAt: start + 100)
        #expect(table.canDecide("p", lease: second, now: start + 200) == nil)
        let ended = table.expire(lease: second, now: start + 200)
        #expect(ended.map(\.panel) == ["p"] && ended.map(\.reason) == [.leaseLost])
        #expect(table.isEmpty)
    }

    @Test func expiryAtTheDeadlineNamesIt() {
        var table = DecisionTable()
        let lease = held(id: 1, sentAt: start)
        table.start("a", block: FenceBlock(term: 5, first: 1, last: 10), lease: 1)
        table.start("b", block: FenceBlock(term: 6, first: 1, last: 10), lease: 1)
        #expect(table.expire(lease: lease, now: start + 2_000).isEmpty)
        let ended = table.expire(lease: lease, now: start + 2_500)
        #expect(ended.map(\.panel) == ["a", "b"] && ended.allSatisfy { $0.reason == .leaseDeadline })
    }

    @Test func extendAndStopOnlyInTheSameTerm() {
        var table = DecisionTable()
        table.start("p", block: FenceBlock(term: 5, first: 1, last: 1000), lease: 1)
        let otherTerm = table.extend("p", block: FenceBlock(term: 6, first: 1, last: 2000))
        let sameTerm = table.extend("p", block: FenceBlock(term: 5, first: 1, last: 2000))
        #expect(!otherTerm && sameTerm)
        #expect(table.entries["p"]?.block.last == 2000 && table.entries["p"]?.lease == 1)
        let stoppedOld = table.stop("p", term: 4)
        let stopped = table.stop("p", term: 5)
        let stoppedAgain = table.stop("p", term: 5)
        #expect(!stoppedOld && stopped && !stoppedAgain, "stopped once, in its own term")
    }
}
