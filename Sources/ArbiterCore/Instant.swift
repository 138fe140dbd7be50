/// A point on the server's monotonic clock, in nanoseconds.
///
/// The core never reads a clock: every entry point is handed `now`, so tests can
/// say "three seconds later" without waiting and a late timer tick cannot change
/// a decision that time alone already made.
///
/// Kept in nanoseconds, not whole milliseconds: a reading truncated to milliseconds
/// lies up to 1 ms in the past, so a deadline `hold_ms` after it would come up to 1 ms
/// early ("must stay held for hold_ms" means at least that long after arrival), and
/// buzzer rankings need microseconds. Durations in the configuration stay milliseconds.
public struct Instant: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var nanoseconds: Int64

    public init(nanoseconds: Int64) {
        self.nanoseconds = nanoseconds
    }

    public init(milliseconds: Int64) {
        self.nanoseconds = milliseconds &* 1_000_000
    }

    /// Whole milliseconds, rounded down.
    public var milliseconds: Int64 { Self.floorDiv(nanoseconds, 1_000_000) }

    public static func < (lhs: Instant, rhs: Instant) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }

    /// `lhs` plus `rhs` milliseconds (the unit every configured duration is in).
    public static func + (lhs: Instant, rhs: Int64) -> Instant {
        Instant(nanoseconds: lhs.nanoseconds &+ rhs &* 1_000_000)
    }

    /// Whole milliseconds from `earlier` to `self`, rounded down (negative if `earlier`
    /// is later), so an elapsed time is never reported longer than it was.
    public func since(_ earlier: Instant) -> Int64 {
        Self.floorDiv(nanoseconds &- earlier.nanoseconds, 1_000_000)
    }

    /// Whole microseconds from `earlier` to `self`, rounded down.
    public func microseconds(since earlier: Instant) -> Int64 {
        Self.floorDiv(nanoseconds &- earlier.nanoseconds, 1_000)
    }

    public var description: String { "\(nanoseconds)ns" }

    private static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }
}
