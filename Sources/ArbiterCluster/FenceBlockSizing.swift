/// How many fences the next block reserves: enough to last about `lastingMilliseconds`
/// at the rate the current block is being used, so a busy leader writes to etcd a few
/// times a second at most instead of once per thousand grants (at 30,000 grants a
/// second that was a write every 30 ms, and etcd took a quarter of a core). Fences need
/// only increase, so a large block costs nothing but the numbers a failover skips.
public enum FenceBlockSizing {
    /// The largest block: a million fences, so even a leader that dies at once after
    /// reserving skips at most that many of the 2^64.
    public static let maximum: UInt64 = 1_000_000

    /// `used` fences were handed out in `elapsedMilliseconds`; the size of the next block,
    /// a multiple of `FenceBlock.size` between it and `maximum`.
    public static func next(used: UInt64, elapsedMilliseconds: Int64, lastingMilliseconds: UInt64 = 2000) -> UInt64 {
        let minimum = FenceBlock.size
        let elapsed = UInt64(max(1, elapsedMilliseconds))
        let (scaled, overflow) = used.multipliedReportingOverflow(by: lastingMilliseconds)
        let wanted = overflow ? maximum : scaled / elapsed
        let rounded = (min(wanted, maximum) + minimum - 1) / minimum * minimum
        return min(maximum, max(minimum, rounded))
    }
}
