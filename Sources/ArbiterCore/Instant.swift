/// A point on the server's monotonic clock, in milliseconds.
///
/// The core never reads a clock: every entry point is handed `now`, so tests can
/// say "three seconds later" without waiting and a late timer tick cannot change
/// a decision that time alone already made.
public struct Instant: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var milliseconds: Int64

    public init(milliseconds: Int64) {
        self.milliseconds = milliseconds
    }

    public static func < (lhs: Instant, rhs: Instant) -> Bool {
        lhs.milliseconds < rhs.milliseconds
    }

    public static func + (lhs: Instant, rhs: Int64) -> Instant {
        Instant(milliseconds: lhs.milliseconds &+ rhs)
    }

    /// Milliseconds from `earlier` to `self` (negative if `earlier` is later).
    public func since(_ earlier: Instant) -> Int64 {
        milliseconds &- earlier.milliseconds
    }

    public var description: String { "\(milliseconds)ms" }
}
