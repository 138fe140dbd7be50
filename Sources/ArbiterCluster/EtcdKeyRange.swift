/// A single key, or the keys in `[key, rangeEnd)` as etcd's `range_end` defines them.
public struct EtcdKeyRange: Equatable, Sendable {
    public var key: [UInt8]
    /// Nil for the single key `key`.
    public var rangeEnd: [UInt8]?

    public init(key: [UInt8], rangeEnd: [UInt8]? = nil) {
        self.key = key
        self.rangeEnd = rangeEnd
    }

    public static func key(_ text: String) -> EtcdKeyRange {
        EtcdKeyRange(key: Array(text.utf8))
    }

    /// Every key starting with `text`: etcd's prefix form, the prefix with its last byte
    /// incremented (bytes of 0xFF are dropped first).
    public static func prefix(_ text: String) -> EtcdKeyRange {
        var end = Array(text.utf8)
        while let last = end.last {
            if last < 0xFF {
                end[end.count - 1] = last + 1
                return EtcdKeyRange(key: Array(text.utf8), rangeEnd: end)
            }
            end.removeLast()
        }
        // All 0xFF: etcd's "\0" means "to the end of the key space".
        return EtcdKeyRange(key: Array(text.utf8), rangeEnd: [0])
    }

    public func contains(_ candidate: [UInt8]) -> Bool {
        guard let rangeEnd else { return candidate == key }
        if !(candidate.lexicographicallyPrecedes(key)) {
            if rangeEnd == [0] { return true }
            return candidate.lexicographicallyPrecedes(rangeEnd)
        }
        return false
    }
}
