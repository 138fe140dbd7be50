import ArbiterCluster
import Testing

@Suite struct FenceBlockSizingTests {
    @Test func aSlowLeaderKeepsTheSmallestBlock() {
        #expect(FenceBlockSizing.next(used: 0, elapsedMilliseconds: 0) == 1000)
        #expect(FenceBlockSizing.next(used: 800, elapsedMilliseconds: 60_000) == 1000)
    }

    @Test func aBusyLeaderGetsABlockThatLastsAboutTwoSeconds() {
        // 800 fences in 25 ms is 32,000 a second: two seconds' worth, in whole thousands.
        #expect(FenceBlockSizing.next(used: 800, elapsedMilliseconds: 25) == 64_000)
        #expect(FenceBlockSizing.next(used: 1_500, elapsedMilliseconds: 1000) == 3_000)
        #expect(FenceBlockSizing.next(used: 1_001, elapsedMilliseconds: 2000) == 2_000)
    }

    @Test func theBlockIsCappedEvenForAbsurdRates() {
        #expect(FenceBlockSizing.next(used: 10_000_000, elapsedMilliseconds: 1) == FenceBlockSizing.maximum)
        #expect(FenceBlockSizing.next(used: .max, elapsedMilliseconds: 1) == FenceBlockSizing.maximum)
        // A clock that went backwards counts as one millisecond, not as a division by zero.
        #expect(FenceBlockSizing.next(used: 999, elapsedMilliseconds: -5) == FenceBlockSizing.maximum)
    }
}
