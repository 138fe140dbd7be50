import Synchronization

/// A clock that moves only when told to (tests): the one the tests of every module share.
/// Safe to read from any queue. In ArbiterIO rather than a test target because production
/// code takes any `TimeSource`, and every test target can see ArbiterIO.
public final class ManualClock: TimeSource {
    private let monotonic: Atomic<Int64>
    private let wall: Atomic<Int64>

    /// Starts at `nanoseconds` on the monotonic clock and `wallMilliseconds` on the wall.
    public init(nanoseconds: Int64 = 1_000_000_000, wallMilliseconds: Int64 = 1_700_000_000_000) {
        monotonic = Atomic(nanoseconds)
        wall = Atomic(wallMilliseconds)
    }

    public func nanoseconds() -> Int64 { monotonic.load(ordering: .acquiring) }
    public func wallMilliseconds() -> Int64 { wall.load(ordering: .acquiring) }

    public func advance(milliseconds: Int64) {
        advance(nanoseconds: milliseconds * 1_000_000)
    }

    /// Moves both clocks on; the wall clock by the whole milliseconds it passes.
    public func advance(nanoseconds: Int64) {
        let before = monotonic.add(nanoseconds, ordering: .releasing).oldValue
        wall.add((before + nanoseconds) / 1_000_000 - before / 1_000_000, ordering: .releasing)
    }
}
