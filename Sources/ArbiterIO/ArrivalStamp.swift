import Glibc

/// When bytes arrived, from the kernel's receive stamp (`SO_TIMESTAMPNS`): a buzzer round
/// ranks by it, because with several reactors the time a socket was read says when its
/// thread got to it, not when its bytes came.
///
/// The kernel stamps on CLOCK_REALTIME, which a clock step moves; the server decides on
/// CLOCK_MONOTONIC. A stamp is moved onto the monotonic clock by the offset between the
/// two, sampled at most once a millisecond, and only believed when it lands between
/// `maxDelayNs` before its read and the read itself: a step between the sample and the
/// read, or a stamp taken before a step and read after it, lands outside (unless the
/// step is smaller than that bound), and the read time is used instead.
///
/// A sample reads the monotonic clock on both sides of the wall clock and is kept only
/// when the two readings are close (`maxSampleSpreadNs`): a thread preempted between
/// two readings took an offset milliseconds off, which moved every stamp of its batch
/// that much earlier (seen: presses of an open round ranked as if they came before its
/// ARM, and denied as early).
public enum ArrivalStamp {
    /// The longest a stamp may come before its read: a reactor never leaves a readable
    /// socket that long, so an older stamp means the wall clock moved.
    public static let maxDelayNs: Int64 = 1_000_000_000

    public enum Reading: Equatable, Sendable {
        /// The bytes arrived this long before they were read.
        case delay(Int64)
        /// The kernel gave no stamp.
        case none
        /// The stamp, moved onto the monotonic clock, is after the read or more than
        /// `maxDelayNs` before it: the wall clock was set meanwhile.
        case clockStepped
    }

    /// How long before its read (at `readMonotonicNs`) a stamp of `kernelRealtimeNs`
    /// says the bytes arrived, given CLOCK_REALTIME minus CLOCK_MONOTONIC.
    @inlinable
    public static func reading(kernelRealtimeNs: Int64, realtimeOffset: Int64, readMonotonicNs: Int64) -> Reading {
        guard kernelRealtimeNs != 0 else { return .none }
        let delay = readMonotonicNs &- (kernelRealtimeNs &- realtimeOffset)
        // The offset is known to within half a sample's spread: a stamp that close after
        // its read came at the read.
        guard delay >= -maxSampleSpreadNs / 2, delay <= maxDelayNs else { return .clockStepped }
        return .delay(max(0, delay))
    }

    /// The widest a sample's two monotonic readings may be apart for its offset to be kept.
    public static let maxSampleSpreadNs: Int64 = 20_000

    /// CLOCK_REALTIME minus CLOCK_MONOTONIC now, to within half of `maxSampleSpreadNs`;
    /// `previous` when the thread was held up between the readings.
    public static func realtimeOffset(previous: Int64) -> Int64 {
        var before = timespec()
        var wall = timespec()
        var after = timespec()
        clock_gettime(CLOCK_MONOTONIC, &before)
        clock_gettime(CLOCK_REALTIME, &wall)
        clock_gettime(CLOCK_MONOTONIC, &after)
        let first = nanoseconds(before)
        let second = nanoseconds(after)
        guard second &- first <= maxSampleSpreadNs else { return previous }
        return nanoseconds(wall) &- (first &+ (second &- first) / 2)
    }

    /// A first offset, for a loop that has none yet: a few tries at a close sample.
    public static func initialRealtimeOffset() -> Int64 {
        var offset = realtimeOffset(previous: Int64.min)
        for _ in 0..<100 where offset == Int64.min { offset = realtimeOffset(previous: Int64.min) }
        // Every try held up (a machine that busy): the last one, as it came.
        if offset == Int64.min {
            var wall = timespec()
            clock_gettime(CLOCK_REALTIME, &wall)
            offset = nanoseconds(wall) &- SystemClock.monotonic.nanoseconds()
        }
        return offset
    }

    @inlinable static func nanoseconds(_ ts: timespec) -> Int64 {
        Int64(ts.tv_sec) &* 1_000_000_000 &+ Int64(ts.tv_nsec)
    }
}
