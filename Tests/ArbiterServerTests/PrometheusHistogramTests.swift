import ArbiterCore
import Testing
@testable import ArbiterServer

/// The latency histogram of `/metrics`, from the shared `LatencyHistogram`.
@Suite struct PrometheusHistogramTests {
    @Test func bucketsAreCumulativeAndEndWithTheCount() {
        var h = LatencyHistogram()
        h.record(50_000, count: 3)  // 50 us
        h.record(2_000_000)  // 2 ms
        var page = PrometheusText()
        page.histogram("x_seconds", "test", h)
        let lines = page.text.split(separator: "\n").map(String.init)
        #expect(lines.contains("x_seconds_bucket{le=\"0.0001\"} 3"))
        #expect(lines.contains("x_seconds_bucket{le=\"0.001\"} 3"))
        #expect(lines.contains("x_seconds_bucket{le=\"0.0025\"} 4"))
        #expect(lines.contains("x_seconds_bucket{le=\"+Inf\"} 4"))
        #expect(lines.contains("x_seconds_sum 0.00215"))
        #expect(lines.contains("x_seconds_count 4"))
        let buckets = lines.filter { $0.hasPrefix("x_seconds_bucket") }
        #expect(buckets.count == PrometheusText.latencyBounds.count + 1)
    }
}
