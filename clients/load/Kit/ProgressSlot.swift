import ArbiterCore

/// What an engine last published for the live progress line.
struct ProgressSlot: Sendable {
    var replies = 0
    var events = 0
    var errors = 0
    /// Latencies since the progress line last took them.
    var interval = LatencyHistogram()
}
