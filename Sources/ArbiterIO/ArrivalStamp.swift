import Glibc

/// When bytes arrived, from the kernel's receive stamp (`SO_TIMESTAMPNS`): a buzzer round
/// ranks by it, because with several reactors the time a socket was read says when its
/// thread got to it, not when its bytes came.
///
/// The kernel stamps on CLOCK_REALTIME, which a clock step moves; the server decides on
/// CLOCK_MONOTONIC. A stamp is moved onto the monotonic clock by the offset between the
/// two, sampled once per batch of reads, and only believed when it lands between
/// `maxDelayNs` before its read and the read itself: a step between the sample and the
/// read, or a stamp taken before a step and read after it, lands outside (unless the
/// step is smaller than that bound), and the read time is used instead.
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
        guard delay >= 0, delay <= maxDelayNs else { return .clockStepped }
        return .delay(delay)
    }

    /// CLOCK_REALTIME minus CLOCK_MONOTONIC now, given the monotonic clock just read.
    @inlinable
    public static func realtimeOffset(givenMonotonic monotonic: Int64) -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) &* 1_000_000_000 &+ Int64(ts.tv_nsec) &- monotonic
    }
}
