import ArbiterCore

/// The /metrics page in the Prometheus text exposition format (version 0.0.4).
package struct PrometheusText {
    private(set) var text = ""

    package mutating func counter(_ name: String, _ help: String, _ value: Int, labels: String = "") {
        header(name, help, "counter")
        text += "\(name)\(labels) \(value)\n"
    }

    package mutating func gauge(_ name: String, _ help: String, _ value: Int) {
        header(name, help, "gauge")
        text += "\(name) \(value)\n"
    }

    /// One metric with a sample per label value.
    package mutating func counters(_ name: String, _ help: String, label: String, _ values: [(String, Int)]) {
        header(name, help, "counter")
        for (labelValue, value) in values { text += "\(name){\(label)=\"\(labelValue)\"} \(value)\n" }
    }

    /// The `le` bounds of a latency histogram, in seconds.
    static let latencyBounds: [Double] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1]

    mutating func histogram(_ name: String, _ help: String, _ h: LatencyHistogram) {
        header(name, help, "histogram")
        for bound in Self.latencyBounds {
            text += "\(name)_bucket{le=\"\(bound)\"} \(h.count(atOrBelow: UInt64(bound * 1e9)))\n"
        }
        text += "\(name)_bucket{le=\"+Inf\"} \(h.count)\n"
        text += "\(name)_sum \(Double(h.sum) / 1e9)\n"
        text += "\(name)_count \(h.count)\n"
    }

    private mutating func header(_ name: String, _ help: String, _ type: String) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }
}
