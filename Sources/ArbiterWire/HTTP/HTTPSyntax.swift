/// Byte classes of HTTP/1.1 (RFC 9110 / RFC 9112) shared by the detector and the parser,
/// so both agree on what a request line is.
enum HTTPSyntax {
    static let space: UInt8 = 0x20
    static let tab: UInt8 = 0x09
    static let cr: UInt8 = 0x0D
    static let lf: UInt8 = 0x0A
    static let colon: UInt8 = 0x3A

    /// RFC 9110 `tchar`: the characters of a token (methods, header names, Connection options).
    static func isTokenChar(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "a")...UInt8(ascii: "z"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"),
            UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// A `tchar` that is not a lowercase letter. Registered methods are uppercase, and a
    /// line peer typing `get ...` must be told apart from a browser at its first byte.
    static func isUppercaseMethodChar(_ byte: UInt8) -> Bool {
        isTokenChar(byte) && !(UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
    }

    /// A byte allowed in a request-target: visible ASCII. Anything else (controls, space,
    /// raw non-ASCII) must arrive percent-encoded, so its presence means "not a target".
    static func isTargetChar(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte < 0x7F
    }

    /// A byte allowed inside a field value: visible ASCII, SP, HTAB and obs-text.
    /// CR, LF, NUL and other controls are refused because they split or truncate headers.
    static func isFieldValueChar(_ byte: UInt8) -> Bool {
        byte == tab || (byte >= 0x20 && byte != 0x7F)
    }

    /// ASCII case-insensitive equality, for header names: no lowercased copies per lookup.
    static func equalsIgnoringCase(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.elementsEqual(rhs.utf8) { asciiLower($0) == asciiLower($1) }
    }

    private static func asciiLower(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }

    /// Splits a comma-separated header value into trimmed, lowercased, non-empty elements.
    static func tokenList(_ value: String) -> [String] {
        value.split(separator: ",").compactMap { element in
            let token = trimmed(element)
            return token.isEmpty ? nil : token.lowercased()
        }
    }

    /// Removes the optional whitespace (SP / HTAB) that RFC 9110 allows around list elements.
    static func trimmed(_ text: Substring) -> Substring {
        var result = text
        while let first = result.first, first == " " || first == "\t" { result.removeFirst() }
        while let last = result.last, last == " " || last == "\t" { result.removeLast() }
        return result
    }
}
