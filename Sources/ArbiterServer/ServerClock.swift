import ArbiterCore
import ArbiterIO

/// Readings of the clocks the server hands to the pure layers.
enum ServerClock {
    /// The monotonic clock the panel cores decide by.
    static func now() -> Instant { Instant(nanoseconds: Sys.monotonicNanoseconds()) }

    /// Wall time for journal records, Unix milliseconds.
    static func wallMilliseconds() -> Int64 { Sys.wallClockMilliseconds() }
}
