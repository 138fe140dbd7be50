import Glibc

/// The kernel's clocks, read with `clock_gettime` (a vDSO call, no system call). One
/// shared instance per clock (`TimeSource` is a class protocol, see there).
public final class SystemClock: TimeSource {
    /// CLOCK_MONOTONIC: the server's clock (panels, connections, timeouts).
    public static let monotonic = SystemClock(id: CLOCK_MONOTONIC)

    /// CLOCK_BOOTTIME, the cluster runtime's clock: unlike CLOCK_MONOTONIC it also counts
    /// time the machine spent suspended, so a resumed VM sees the jump and its leaders
    /// step down. CLOCK_MONOTONIC where there is no such clock.
    #if os(Linux)
        public static let boot = SystemClock(id: CLOCK_BOOTTIME)
    #else
        public static let boot = SystemClock(id: CLOCK_MONOTONIC)
    #endif

    @usableFromInline let id: clockid_t

    private init(id: clockid_t) { self.id = id }

    @inlinable public func nanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(id, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// `TimeSource.milliseconds` for callers that hold a `SystemClock` itself: read at
    /// each relayed write, and the protocol's generic form went through its witness.
    @inlinable public func milliseconds() -> Int64 { nanoseconds() / 1_000_000 }

    @inlinable public func wallMilliseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    @inlinable public func reading(givenMonotonic real: Int64) -> Int64 {
        id == CLOCK_MONOTONIC ? real : nanoseconds()
    }
}
