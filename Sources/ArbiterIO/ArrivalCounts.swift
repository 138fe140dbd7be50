import Synchronization

/// Where the arrival times of one loop's reads of stamped sockets came from
/// (`EventLoop.stampsArrivals`): the kernel's stamp, or the read time because no stamp
/// came or the wall clock moved (`ArrivalStamp`). Any thread reads them (/metrics).
public final class ArrivalCounts: Sendable {
    public let stamped = Atomic<Int>(0)
    public let unstamped = Atomic<Int>(0)
    public let clockStepped = Atomic<Int>(0)
    /// Stamped reads whose stamp was before what the loop had already said it read through
    /// (`ReadWatermark`, less its stamp error): the kernel stamped them, then queued them on
    /// the socket later than the watermark allows for. And the largest such lag, in ns.
    public let behindReadMark = Atomic<Int>(0)
    public let behindReadMarkMaxNs = Atomic<Int64>(0)

    public init() {}
}
