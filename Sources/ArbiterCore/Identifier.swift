/// The shapes of ids and names (PROTOCOL.md section 2), checked on bytes.
public enum Identifier {
    /// Panel and button ids: `[A-Za-z0-9_-]{1,64}`.
    public static func isValidID(_ s: some StringProtocol) -> Bool {
        check(s.utf8, maxLength: 64, allowDot: false)
    }

    /// The same check on bytes, for the parsers' hot path.
    @inlinable
    public static func isValidID(bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count >= 1, bytes.count <= 64 else { return false }
        for b in bytes {
            let letter = (b | 0x20) &- 0x61 < 26
            let digit = b &- 0x30 < 10
            if !(letter || digit || b == 0x5F || b == 0x2D) { return false }
        }
        return true
    }

    /// Names: `[A-Za-z0-9_.-]{1,32}`.
    public static func isValidName(_ s: some StringProtocol) -> Bool {
        check(s.utf8, maxLength: 32, allowDot: true)
    }

    private static func check(_ bytes: some Collection<UInt8>, maxLength: Int, allowDot: Bool) -> Bool {
        var count = 0
        for b in bytes {
            count += 1
            if count > maxLength { return false }
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
                continue
            case UInt8(ascii: "."):
                if !allowDot { return false }
            default:
                return false
            }
        }
        return count > 0
    }
}
