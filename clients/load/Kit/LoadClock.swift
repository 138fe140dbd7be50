import ArbiterIO

/// The generator's only clock: CLOCK_MONOTONIC in nanoseconds, the reading the server
/// takes too (`SystemClock.monotonic.nanoseconds`), read through the vDSO.
///
/// Every latency is a difference of two readings taken on this clock, so wall-clock
/// jumps never show up as negative or huge latencies.
public enum LoadClock {
    @inline(__always)
    public static func now() -> UInt64 { UInt64(SystemClock.monotonic.nanoseconds()) }

    /// Nanoseconds per millisecond and per second, spelled once.
    public static let millisecond: UInt64 = 1_000_000
    public static let second: UInt64 = 1_000_000_000
}
