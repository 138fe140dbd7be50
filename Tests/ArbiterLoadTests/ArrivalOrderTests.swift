import Testing

@testable import ArbiterLoadKit

/// The buzz workload's count of pairs ranked against their send order.
@Suite struct ArrivalOrderTests {
    @Test func pairsSentFarEnoughApartAndRankedTheOtherWayAreCounted() {
        var order = ArrivalOrder()
        // Round 1: sent at 0, 50 µs, 300 µs, 2 ms; ranked 2, 1, 3, 4 (the first two swapped
        // 50 µs apart: an inversion of any gap, not of >= 100 µs).
        for (sent, rank) in [(0, 2), (50, 1), (300, 3), (2000, 4)] {
            order.record(round: 1, sentAt: UInt64(sent) * 1000, rank: Int32(rank))
        }
        // Round 2: the last sender won, 1,200 µs after the first.
        for (sent, rank) in [(0, 2), (100, 3), (500, 4), (1200, 1)] {
            order.record(round: 2, sentAt: UInt64(sent) * 1000, rank: Int32(rank))
        }
        // Round 3 lost a player (the measurement began in it): not counted.
        order.record(round: 3, sentAt: 0, rank: 1)
        let summary = order.summary(players: 4)
        #expect(summary.rounds == 2)
        #expect(summary.pairs == 5 + 6)
        #expect(summary.inversions == 3)
        #expect(summary.winnerInversions == 1)
        #expect(summary.allInversions == 4)
        #expect(summary.largestInvertedGapNs == 1_200_000)
        #expect(summary.invertedByGap == [0, 1, 1, 2])
    }
}
