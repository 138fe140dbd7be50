/// An incremental UTF-8 validator (Unicode 15, table 3-7: no overlongs, no surrogates,
/// nothing above U+10FFFF).
///
/// Its state is three bytes, so it can be carried across WebSocket fragments and TCP reads
/// and report an invalid sequence at the first byte that makes it invalid, instead of
/// after the whole message arrived. (`UTF8Validator` checks one whole buffer, e.g. a line;
/// this type is for data that arrives in pieces.)
public struct UTF8StreamValidator: Sendable, Equatable {
    /// Continuation bytes still expected for the current code point.
    private var remaining: UInt8 = 0
    /// Allowed range of the next continuation byte; narrower than 80...BF right after the
    /// lead bytes E0, ED, F0 and F4, which is how overlongs and surrogates are excluded.
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF

    /// A validator at the start of a text.
    public init() {}

    /// Whether the bytes so far end on a code point boundary (a complete text).
    public var isAtBoundary: Bool { remaining == 0 }

    /// Validates the next bytes; returns false at the first invalid byte. After false the
    /// validator must not be used again.
    public mutating func feed(_ bytes: some Collection<UInt8>) -> Bool {
        let fast = bytes.withContiguousStorageIfAvailable { buffer in
            feed(UnsafeRawBufferPointer(buffer))
        }
        if let fast { return fast }
        return feed(Array(bytes))
    }

    /// Validates the next bytes from raw memory; returns false at the first invalid byte.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        let count = bytes.count
        while index < count {
            if remaining == 0 {
                // Most text is ASCII: skip it eight bytes at a time.
                while index + 8 <= count,
                    bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0
                {
                    index += 8
                }
                guard index < count else { return true }
            }
            guard step(bytes[index]) else { return false }
            index += 1
        }
        return true
    }

    private mutating func step(_ byte: UInt8) -> Bool {
        if remaining > 0 {
            guard byte >= lower && byte <= upper else { return false }
            remaining -= 1
            lower = 0x80
            upper = 0xBF
            return true
        }
        switch byte {
        case 0x00...0x7F: return true
        case 0xC2...0xDF: expect(1, 0x80, 0xBF)
        case 0xE0: expect(2, 0xA0, 0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: expect(2, 0x80, 0xBF)
        case 0xED: expect(2, 0x80, 0x9F)
        case 0xF0: expect(3, 0x90, 0xBF)
        case 0xF1...0xF3: expect(3, 0x80, 0xBF)
        case 0xF4: expect(3, 0x80, 0x8F)
        default: return false
        }
        return true
    }

    private mutating func expect(_ count: UInt8, _ low: UInt8, _ high: UInt8) {
        remaining = count
        lower = low
        upper = high
    }

    /// Whether `bytes` is one complete, valid UTF-8 text.
    public static func isValid(_ bytes: some Collection<UInt8>) -> Bool {
        var validator = UTF8StreamValidator()
        return validator.feed(bytes) && validator.isAtBoundary
    }
}
