/// A fixed map from ids to values, built once, looked up on every command.
///
/// Swift's `Dictionary` hashes a `String` with per-process-seeded SipHash, which cost more
/// than the rest of a DOWN's lookup path together. Ids here are short, come from our own
/// configuration and never change after start, so FNV-1a over the UTF-8 bytes with open
/// addressing is enough, and several times cheaper.
@frozen
public struct IDTable<Value: Sendable>: Sendable {
    // Inlinable, so each user gets a version specialized to its Value: unspecialized
    // generic code asked the runtime for Optional<Value>'s metadata on every lookup.
    @usableFromInline let keys: [String?]
    /// The same keys as bytes, for lookups straight from a received line.
    @usableFromInline let keyBytes: [[UInt8]]
    @usableFromInline let values: [Value?]
    @usableFromInline let mask: Int

    public init(_ entries: [(String, Value)]) {
        var capacity = 8
        while capacity < entries.count * 2 { capacity *= 2 }
        var keys = [String?](repeating: nil, count: capacity)
        var values = [Value?](repeating: nil, count: capacity)
        let mask = capacity - 1
        for (key, value) in entries {
            var slot = Self.hash(key) & mask
            var taken = false
            while let existing = keys[slot] {
                if existing == key { taken = true }
                slot = (slot + 1) & mask
            }
            if taken { continue }
            keys[slot] = key
            values[slot] = value
        }
        self.keys = keys
        self.keyBytes = keys.map { $0.map { Array($0.utf8) } ?? [] }
        self.values = values
        self.mask = mask
    }

    /// Looks up an id given as UTF-8 bytes, without making a `String` of them.
    @inlinable
    public subscript(bytes key: UnsafeBufferPointer<UInt8>) -> Value? {
        var slot = Self.hash(bytes: key) & mask
        while keys[slot] != nil {
            let candidate = keyBytes[slot]
            if candidate.count == key.count, candidate.withUnsafeBufferPointer({ $0.elementsEqual(key) }) {
                return values[slot]
            }
            slot = (slot + 1) & mask
        }
        return nil
    }

    @inlinable @inline(__always)
    static func hash(bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for b in bytes {
            h ^= UInt64(b)
            h = h &* 0x0000_0100_0000_01B3
        }
        return Int(truncatingIfNeeded: h ^ (h >> 32))
    }

    @inlinable
    public subscript(key: String) -> Value? {
        var slot = Self.hash(key) & mask
        while let candidate = keys[slot] {
            if candidate == key { return values[slot] }
            slot = (slot + 1) & mask
        }
        return nil
    }

    @inlinable @inline(__always)
    static func hash(_ key: String) -> Int {
        var key = key
        return key.withUTF8 { hash(bytes: $0) }
    }
}
