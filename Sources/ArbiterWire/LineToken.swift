/// One whitespace-separated token of a text line: `word`, `"two words"` or `key=value`.
public struct LineToken: Sendable, Equatable {
    /// The lowercased key of a `key=value` token.
    public var key: String?
    /// The value with quotes removed and escapes resolved.
    public var value: String

    public init(key: String? = nil, value: String) {
        self.key = key
        self.value = value
    }
}

/// Splits a text line into tokens (PROTOCOL.md section 2 quoting).
public enum LineTokenizer {
    public enum Failure: Error, Equatable {
        case unterminatedQuote
        case badEscape
    }

    /// Tokenizes validated UTF-8 bytes. `\"` and `\\` are the only escapes inside quotes.
    public static func tokenize(_ line: UnsafeBufferPointer<UInt8>) throws(Failure) -> [LineToken] {
        var tokens: [LineToken] = []
        var i = 0
        let n = line.count
        while i < n {
            while i < n, isSpace(line[i]) { i += 1 }
            if i >= n { break }
            var bytes: [UInt8] = []
            var key: String?
            var sawQuote = false
            while i < n, !isSpace(line[i]) {
                let c = line[i]
                if c == UInt8(ascii: "\"") {
                    sawQuote = true
                    i += 1
                    var closed = false
                    while i < n {
                        let q = line[i]
                        if q == UInt8(ascii: "\\") {
                            guard i + 1 < n, line[i + 1] == UInt8(ascii: "\"") || line[i + 1] == UInt8(ascii: "\\") else {
                                throw .badEscape
                            }
                            bytes.append(line[i + 1])
                            i += 2
                        } else if q == UInt8(ascii: "\"") {
                            i += 1
                            closed = true
                            break
                        } else {
                            bytes.append(q)
                            i += 1
                        }
                    }
                    if !closed { throw .unterminatedQuote }
                } else if c == UInt8(ascii: "="), key == nil, !sawQuote, isKey(bytes) {
                    key = String(decoding: bytes.map(lowercased), as: UTF8.self)
                    bytes.removeAll(keepingCapacity: true)
                    i += 1
                } else {
                    bytes.append(c)
                    i += 1
                }
            }
            tokens.append(LineToken(key: key, value: String(decoding: bytes, as: UTF8.self)))
        }
        return tokens
    }

    @inline(__always)
    static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 }

    private static func isKey(_ bytes: [UInt8]) -> Bool {
        guard !bytes.isEmpty, bytes.count <= 32 else { return false }
        return bytes.allSatisfy { c in
            (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A) || (c >= 0x30 && c <= 0x39) || c == 0x5F
        }
    }

    private static func lowercased(_ c: UInt8) -> UInt8 {
        (c >= 0x41 && c <= 0x5A) ? c + 32 : c
    }
}
