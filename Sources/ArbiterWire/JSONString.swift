/// JSON string literals.
public enum JSONString {
    /// A JSON string literal; control characters escaped, everything else as UTF-8.
    public static func append(_ s: String, to out: inout [UInt8]) {
        out.append(0x22)
        for c in s.utf8 {
            switch c {
            case 0x22: Bytes.append("\\\"", to: &out)
            case 0x5C: Bytes.append("\\\\", to: &out)
            case 0x0A: Bytes.append("\\n", to: &out)
            case 0x0D: Bytes.append("\\r", to: &out)
            case 0x09: Bytes.append("\\t", to: &out)
            case 0..<0x20, 0x7F:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                Bytes.append("\\u00", to: &out)
                out.append(hex[Int(c >> 4)])
                out.append(hex[Int(c & 0xF)])
            default: out.append(c)
            }
        }
        out.append(0x22)
    }
}
