/// The /metrics page in the Prometheus text exposition format (version 0.0.4).
struct PrometheusText {
    private(set) var text = ""

    mutating func counter(_ name: String, _ help: String, _ value: Int, labels: String = "") {
        header(name, help, "counter")
        text += "\(name)\(labels) \(value)\n"
    }

    mutating func gauge(_ name: String, _ help: String, _ value: Int) {
        header(name, help, "gauge")
        text += "\(name) \(value)\n"
    }

    /// One metric with a sample per label value.
    mutating func counters(_ name: String, _ help: String, label: String, _ values: [(String, Int)]) {
        header(name, help, "counter")
        for (labelValue, value) in values { text += "\(name){\(label)=\"\(labelValue)\"} \(value)\n" }
    }

    mutating func histogram(_ name: String, _ help: String, _ h: LatencyHistogram) {
        header(name, help, "histogram")
        var cumulative = 0
        for (i, bound) in LatencyHistogram.bounds.enumerated() {
            cumulative += h.counts[i]
            text += "\(name)_bucket{le=\"\(bound)\"} \(cumulative)\n"
        }
        text += "\(name)_bucket{le=\"+Inf\"} \(h.total)\n"
        text += "\(name)_sum \(Double(h.sumNanos) / 1e9)\n"
        text += "\(name)_count \(h.total)\n"
    }

    private mutating func header(_ name: String, _ help: String, _ type: String) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }
}
