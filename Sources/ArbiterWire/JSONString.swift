/// JSON string literals.
public enum JSONString {
    /// A JSON string literal; control characters escaped, everything else as UTF-8.
    ///
    /// The C1 controls (U+0080-U+009F) and U+2028/U+2029 are valid raw in JSON, but
    /// readers that split text into lines (Python's `splitlines`, JavaScript before
    /// ES2019) break at NEL or at the line separators: escaped, nothing a peer sends
    /// can split a message.
    public static func append(_ s: String, to out: inout [UInt8]) {
        var s = s
        s.withUTF8 { append(bytes: $0, to: &out) }
    }

    private static func append(bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        out.append(0x22)
        var i = 0
        while i < bytes.count {
            let c = bytes[i]
            switch c {
            case 0x22: Bytes.append("\\\"", to: &out)
            case 0x5C: Bytes.append("\\\\", to: &out)
            case 0x0A: Bytes.append("\\n", to: &out)
            case 0x0D: Bytes.append("\\r", to: &out)
            case 0x09: Bytes.append("\\t", to: &out)
            case 0..<0x20, 0x7F:
                escape(UInt16(c), to: &out)
            case 0xC2 where i + 1 < bytes.count && (0x80...0x9F).contains(bytes[i + 1]):
                escape(UInt16(bytes[i + 1]), to: &out)
                i += 1
            case 0xE2 where i + 2 < bytes.count && bytes[i + 1] == 0x80 && (bytes[i + 2] == 0xA8 || bytes[i + 2] == 0xA9):
                escape(0x2000 | UInt16(bytes[i + 2] - 0x80), to: &out)
                i += 2
            default: out.append(c)
            }
            i += 1
        }
        out.append(0x22)
    }

    private static func escape(_ unit: UInt16, to out: inout [UInt8]) {
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        Bytes.append("\\u", to: &out)
        for shift in stride(from: 12, through: 0, by: -4) {
            out.append(hex[Int((unit >> UInt16(shift)) & 0xF)])
        }
    }
}
