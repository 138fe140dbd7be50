/// Whole-buffer UTF-8 validation with an ASCII fast path (most lines are ASCII).
public enum UTF8Validator {
    public static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        let n = bytes.count
        // Eight bytes at a time while they are all ASCII.
        if let base = UnsafeRawPointer(bytes.baseAddress) {
            while i + 8 <= n {
                if base.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { break }
                i += 8
            }
        }
        while i < n {
            let c = bytes[i]
            if c < 0x80 {
                i += 1
                continue
            }
            let need: Int
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF
            switch c {
            case 0xC2...0xDF: need = 1
            case 0xE0: need = 2; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: need = 2
            case 0xED: need = 2; high = 0x9F  // no UTF-16 surrogates
            case 0xF0: need = 3; low = 0x90
            case 0xF1...0xF3: need = 3
            case 0xF4: need = 3; high = 0x8F  // nothing above U+10FFFF
            default: return false
            }
            guard i + need < n else { return false }
            let first = bytes[i + 1]
            guard first >= low, first <= high else { return false }
            var k = 2
            while k <= need {
                let b = bytes[i + k]
                guard b >= 0x80, b <= 0xBF else { return false }
                k += 1
            }
            i += need + 1
        }
        return true
    }

    public static func isValid(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { isValid($0) }
    }
}
