/// Byte-level helpers for reading server messages without building Strings: the hot
/// path of the generator reads millions of lines and must stay far cheaper than the
/// server that writes them.
public enum ByteText {
    @inline(__always)
    static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ word: StaticString) -> Bool {
        guard range.count == word.utf8CodeUnitCount else { return false }
        let w = word.utf8Start
        var i = 0
        for j in range {
            if bytes[j] != w[i] { return false }
            i += 1
        }
        return true
    }

    /// Whether `word` occurs anywhere in `range` (for the rare lines whose free text
    /// matters, never on the hot path).
    static func contains(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ word: StaticString) -> Bool {
        let n = word.utf8CodeUnitCount
        guard n > 0, range.count >= n else { return n == 0 }
        for start in range.lowerBound...(range.upperBound - n) where equals(bytes, start..<(start + n), word) { return true }
        return false
    }

    /// A non-negative decimal integer, or nil if `range` is empty or holds anything else.
    @inline(__always)
    static func integer(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int64? {
        guard !range.isEmpty, range.count <= 18 else { return nil }
        var v: Int64 = 0
        for j in range {
            let d = bytes[j] &- 0x30
            if d > 9 { return nil }
            v = v * 10 + Int64(d)
        }
        return v
    }

    /// `0.500` as 500; the protocol always writes three decimals, but fewer are accepted.
    static func permille(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int32 {
        var whole: Int32 = 0
        var fraction: Int32 = 0
        var digits = 0
        var afterPoint = false
        for j in range {
            let c = bytes[j]
            if c == UInt8(ascii: ".") {
                afterPoint = true
                continue
            }
            let d = Int32(c &- 0x30)
            guard d >= 0, d <= 9 else { return -1 }
            if afterPoint {
                guard digits < 3 else { continue }
                fraction = fraction * 10 + d
                digits += 1
            } else {
                whole = whole * 10 + d
            }
        }
        while digits < 3 {
            fraction *= 10
            digits += 1
        }
        return whole * 1000 + fraction
    }

    /// `s42` as 42; -1 for anything else.
    @inline(__always)
    static func session(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int64 {
        guard range.count >= 2, bytes[range.lowerBound] == UInt8(ascii: "s") else { return -1 }
        return integer(bytes, (range.lowerBound + 1)..<range.upperBound) ?? -1
    }

    /// A name as a number: the generator names its connections `c<index>`, which is
    /// kept as the index; any other name becomes a hash with bit 62 set, so owners can be
    /// compared and printed without a String per message.
    @inline(__always)
    static func nameCode(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int64 {
        if range.count >= 2, bytes[range.lowerBound] == UInt8(ascii: "c"),
            let n = integer(bytes, (range.lowerBound + 1)..<range.upperBound)
        {
            return n
        }
        return Int64(bitPattern: fnv1a(bytes, range) & ~(UInt64(3) << 62) | (1 << 62))
    }

    /// How a name code prints.
    public static func describeName(_ code: Int64) -> String {
        if code < 0 { return "-" }
        if code & (1 << 62) != 0 { return "name#\(String(code & ((1 << 62) - 1), radix: 16))" }
        return "c\(code)"
    }

    @inline(__always)
    static func fnv1a(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> UInt64 {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for j in range {
            h ^= UInt64(bytes[j])
            h = h &* 0x100_0000_01B3
        }
        return h
    }

    static func fnv1a(_ text: String) -> UInt64 {
        var copy = text
        return copy.withUTF8 { fnv1a($0, 0..<$0.count) }
    }
}
