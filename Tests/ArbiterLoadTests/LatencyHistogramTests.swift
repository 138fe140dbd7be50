import Testing
@testable import ArbiterLoadKit

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
}
