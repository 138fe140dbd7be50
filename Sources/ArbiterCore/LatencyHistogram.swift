/// A log-bucketed latency histogram in the spirit of HdrHistogram: the load
/// generator's percentiles and the server's `/metrics` histogram, in nanoseconds.
///
/// In ArbiterCore because it is pure and clock-free (it is handed durations), and the
/// server and the load kit both build on this module; ArbiterWire is for byte codecs.
///
/// Millions of samples must cost at most 30 KB, not an array per sample: values below
/// 128 ns are counted exactly, and every power of two above that is split into 64
/// linear sub-buckets, so any reported value is within 1/64 (1.6 %) of a sample that
/// fell into its bucket. Recording is a count-leading-zeros and an increment. The
/// buckets are allocated up to the largest sample's only (about 8 KB for samples up to
/// a millisecond, none while empty): the server keeps one per panel, and a config may
/// have many panels.
public struct LatencyHistogram: Sendable, Equatable {
    static let exactLimit: UInt64 = 128
    static let subBuckets = 64
    static let bucketCount = 128 + (63 - 7 + 1) * 64

    /// Up to the largest sample's bucket.
    private(set) var counts: [UInt64] = []
    public private(set) var count: UInt64 = 0
    public private(set) var max: UInt64 = 0
    public private(set) var min: UInt64 = .max
    /// Sum of all samples, for the mean.
    public private(set) var sum: UInt64 = 0

    public init() {}

    /// The bucket a value falls into.
    @inline(__always)
    static func index(of value: UInt64) -> Int {
        if value < exactLimit { return Int(value) }
        let msb = 63 - value.leadingZeroBitCount
        let shift = msb - 6
        let sub = Int(value >> UInt64(shift)) - 64
        return 128 + (msb - 7) * 64 + sub
    }

    /// The smallest value of a bucket and its width.
    static func range(of index: Int) -> (low: UInt64, width: UInt64) {
        if index < Int(exactLimit) { return (UInt64(index), 1) }
        let msb = (index - 128) / 64 + 7
        let sub = UInt64((index - 128) % 64 + 64)
        let shift = UInt64(msb - 6)
        return (sub << shift, 1 << shift)
    }

    @inline(__always)
    public mutating func record(_ value: UInt64) {
        let i = LatencyHistogram.index(of: value)
        if i >= counts.count { grow(to: i) }
        counts[i] &+= 1
        count &+= 1
        sum &+= value
        if value > max { max = value }
        if value < min { min = value }
    }

    /// `samples` samples of one value: a visit's commands share their handling time.
    @inline(__always)
    public mutating func record(_ value: UInt64, count samples: UInt64) {
        let i = LatencyHistogram.index(of: value)
        if i >= counts.count { grow(to: i) }
        counts[i] &+= samples
        count &+= samples
        sum &+= value &* samples
        if value > max { max = value }
        if value < min { min = value }
    }

    /// How many samples are at or below `bound`, as Prometheus' `le` buckets count: a
    /// bucket counts when all of it is, so the answer is exact for a bound at a bucket's
    /// end and otherwise leaves out samples within 1/64 below the bound.
    public func count(atOrBelow bound: UInt64) -> UInt64 {
        let i = LatencyHistogram.index(of: bound)
        let (low, width) = LatencyHistogram.range(of: i)
        let end = Swift.min(low + (width - 1) <= bound ? i + 1 : i, counts.count)
        var n: UInt64 = 0
        for k in 0..<end { n &+= counts[k] }
        return n
    }

    public mutating func merge(_ other: LatencyHistogram) {
        guard other.count > 0 else { return }
        if other.counts.count > counts.count { grow(to: other.counts.count - 1) }
        for i in other.counts.indices { counts[i] &+= other.counts[i] }
        count &+= other.count
        sum &+= other.sum
        if other.max > max { max = other.max }
        if other.min < min { min = other.min }
    }

    /// Makes room for bucket `index`.
    @inline(never)
    private mutating func grow(to index: Int) {
        counts.append(contentsOf: repeatElement(0, count: index + 1 - counts.count))
    }

    public var mean: Double { count == 0 ? 0 : Double(sum) / Double(count) }

    /// The value at or below which `fraction` (0...1) of the samples lie: the middle of
    /// the bucket holding that rank, never above the largest sample. 0 when empty.
    public func value(atFraction fraction: Double) -> UInt64 {
        guard count > 0 else { return 0 }
        let clamped = Swift.max(0, Swift.min(1, fraction))
        let exact = clamped * Double(count)
        var rank = UInt64(exact)
        if Double(rank) < exact { rank += 1 }
        rank = Swift.max(1, rank)
        var seen: UInt64 = 0
        for (i, c) in counts.enumerated() where c > 0 {
            seen += c
            if seen >= rank {
                let (low, width) = LatencyHistogram.range(of: i)
                let middle = low + (width - 1) / 2
                return Swift.min(Swift.max(middle, min), max)
            }
        }
        return max
    }
}
