import Synchronization

/// A clock that moves only when told to (tests). Safe to read from any queue.
public final class ManualClock: Sendable {
    private let monotonic: Atomic<Int64>
    private let wall: Atomic<Int64>

    /// Starts at `nanoseconds` on the monotonic clock and `wallMilliseconds` on the wall.
    public init(nanoseconds: Int64 = 1_000_000_000, wallMilliseconds: Int64 = 1_700_000_000_000) {
        monotonic = Atomic(nanoseconds)
        wall = Atomic(wallMilliseconds)
    }

    public var nanoseconds: Int64 { monotonic.load(ordering: .acquiring) }
    public var wallMilliseconds: Int64 { wall.load(ordering: .acquiring) }

    public func advance(milliseconds: Int64) {
        monotonic.add(milliseconds * 1_000_000, ordering: .releasing)
        wall.add(milliseconds, ordering: .releasing)
    }
}
