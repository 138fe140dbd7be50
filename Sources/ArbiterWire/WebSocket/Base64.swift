/// Base64 with the standard alphabet and padding (RFC 4648 section 4).
///
/// Decoding is strict on purpose: the WebSocket handshake must refuse a
/// `Sec-WebSocket-Key` that is not the canonical encoding of 16 bytes.
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let pad = UInt8(ascii: "=")

    /// Encodes `bytes` with padding.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var iterator = bytes.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next()
            let third = iterator.next()
            let group = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
            out.append(alphabet[Int(group >> 18 & 0x3F)])
            out.append(alphabet[Int(group >> 12 & 0x3F)])
            out.append(second == nil ? pad : alphabet[Int(group >> 6 & 0x3F)])
            out.append(third == nil ? pad : alphabet[Int(group & 0x3F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes canonical padded Base64, or returns nil.
    ///
    /// Refused: a length that is not a multiple of 4, characters outside the alphabet
    /// (including whitespace), `=` anywhere but the last one or two places, and non-zero
    /// bits in the unused low bits of the last character (a non-canonical encoding).
    public static func decode(_ text: String) -> [UInt8]? {
        let input = Array(text.utf8)
        guard input.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(input.count / 4 * 3)
        var index = 0
        while index < input.count {
            let isLast = index + 4 == input.count
            let padding = isLast ? (input[index + 3] == pad ? (input[index + 2] == pad ? 2 : 1) : 0) : 0
            var group: UInt32 = 0
            for offset in 0..<4 {
                let char = input[index + offset]
                if offset >= 4 - padding {
                    group <<= 6
                    continue
                }
                guard let value = sextet(char) else { return nil }
                group = group << 6 | UInt32(value)
            }
            out.append(UInt8(truncatingIfNeeded: group >> 16))
            if padding < 2 { out.append(UInt8(truncatingIfNeeded: group >> 8)) }
            if padding < 1 { out.append(UInt8(truncatingIfNeeded: group)) }
            // Canonical form: the bits that fall off the last byte must be zero.
            if padding == 1 && group & 0xFF != 0 { return nil }
            if padding == 2 && group & 0xFFFF != 0 { return nil }
            index += 4
        }
        return out
    }

    private static func sextet(_ char: UInt8) -> UInt8? {
        switch char {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return char - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return char - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return char - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): return 62
        case UInt8(ascii: "/"): return 63
        default: return nil
        }
    }
}
