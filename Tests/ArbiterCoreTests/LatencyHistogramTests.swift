import Testing
@testable import ArbiterCore

@Suite struct LatencyHistogramTests {
    @Test func smallValuesAreExact() {
        var h = LatencyHistogram()
        for v: UInt64 in 1...100 { h.record(v) }
        #expect(h.count == 100)
        #expect(h.value(atFraction: 0.5) == 50)
        #expect(h.value(atFraction: 0.99) == 99)
        #expect(h.value(atFraction: 1) == 100)
        #expect(h.min == 1 && h.max == 100)
    }

    @Test func bucketsCoverEveryValueWithinTwoPercent() {
        var v: UInt64 = 1
        while v < UInt64(1) << 62 {
            for probe in [v, v + v / 3, v * 2 - 1] {
                let i = LatencyHistogram.index(of: probe)
                let (low, width) = LatencyHistogram.range(of: i)
                #expect(low <= probe && probe < low + width, "\(probe)")
                #expect(Double(width) <= max(1, Double(low) / 64), "\(probe)")
            }
            v *= 2
        }
        #expect(LatencyHistogram.index(of: .max) == LatencyHistogram.bucketCount - 1)
    }

    @Test func percentilesOfAWideSpread() {
        var h = LatencyHistogram()
        // 1 us .. 10 ms, uniform in 1 us steps.
        for us: UInt64 in 1...10_000 { h.record(us * 1000) }
        for (fraction, expected) in [(0.5, 5_000_000.0), (0.9, 9_000_000.0), (0.99, 9_900_000.0)] {
            let got = Double(h.value(atFraction: fraction))
            #expect(abs(got - expected) / expected < 0.02, "p\(fraction): \(got)")
        }
        #expect(h.value(atFraction: 1) == 10_000_000)
    }

    @Test func mergeAddsCounts() {
        var a = LatencyHistogram()
        var b = LatencyHistogram()
        a.record(10)
        b.record(1_000_000)
        b.record(20)
        a.merge(b)
        #expect(a.count == 3 && a.min == 10 && a.max == 1_000_000 && a.sum == 1_000_030)
        #expect(LatencyHistogram().value(atFraction: 0.99) == 0)
    }

    @Test func aVisitsSamplesAtOnceAreTheSameAsOneByOne() {
        var once = LatencyHistogram()
        var each = LatencyHistogram()
        once.record(37_500, count: 5)
        for _ in 0..<5 { each.record(37_500) }
        #expect(once == each)
        #expect(once.count == 5 && once.sum == 187_500)
    }

    /// What `/metrics` reports per `le` bound.
    @Test func countsAtOrBelowABound() {
        var h = LatencyHistogram()
        h.record(50_000, count: 3)
        h.record(200_000, count: 2)
        h.record(2_000_000)
        #expect(h.count(atOrBelow: 0) == 0)
        #expect(h.count(atOrBelow: 100_000) == 3)
        #expect(h.count(atOrBelow: 250_000) == 5)
        #expect(h.count(atOrBelow: 1_000_000) == 5)
        #expect(h.count(atOrBelow: 1_000_000_000) == 6)
        // A bound at a bucket's end counts the whole bucket; one past a sample, nothing above it.
        let (low, width) = LatencyHistogram.range(of: LatencyHistogram.index(of: 200_000))
        #expect(h.count(atOrBelow: low + width - 1) == 5)
        #expect(h.count(atOrBelow: low - 1) == 3)
        var exact = LatencyHistogram()
        for v: UInt64 in 0..<128 { exact.record(v) }
        #expect(exact.count(atOrBelow: 63) == 64, "values below 128 ns are counted exactly")
    }

    /// The server keeps one per panel: an idle panel's costs no buckets, a busy one's
    /// only those up to its slowest command.
    @Test func bucketsGrowOnlyToTheLargestSample() {
        var h = LatencyHistogram()
        #expect(h.counts.isEmpty)
        h.record(900_000)
        let small = h.counts.count
        #expect(small == LatencyHistogram.index(of: 900_000) + 1)
        #expect(small * 8 < 8_192)
        h.record(10)
        #expect(h.counts.count == small)
        var big = LatencyHistogram()
        big.record(.max)
        #expect(big.counts.count == LatencyHistogram.bucketCount)
        var bigFirst = big
        bigFirst.merge(h)
        h.merge(big)
        #expect(h == bigFirst && h.count == 3)
        #expect(h.count(atOrBelow: 1_000_000) == 2)
    }
}
