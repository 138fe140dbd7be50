/// A block of fences reserved in etcd under one term: the leader may hand out
/// `first...last`, and only while it still leads in that term.
public struct FenceBlock: Equatable, Sendable {
    public var term: Int64
    public var first: UInt64
    public var last: UInt64

    public init(term: Int64, first: UInt64, last: UInt64) {
        self.term = term
        self.first = first
        self.last = last
    }

    /// The default block size, as the journal's: one etcd write per thousand grants.
    public static let size: UInt64 = 1000
}
