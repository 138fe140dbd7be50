/// Writes messages as text lines: `VERB arg key=value ...\n`.
struct TextSink: ByteSink {
    var out: [UInt8] = []

    mutating func begin(_ verb: StaticString, _ type: StaticString) {
        Bytes.append(verb, to: &out)
    }

    mutating func beginOK(_ verb: StaticString, _ re: StaticString) {
        Bytes.append("OK ", to: &out)
        Bytes.append(verb, to: &out)
    }

    mutating func beginOK(verb: String) {
        Bytes.append("OK ", to: &out)
        appendSanitized(verb)
    }

    mutating func arg(_ name: StaticString, _ value: String) {
        out.append(0x20)
        appendValue(value, alwaysQuote: false)
    }

    mutating func string(_ name: StaticString, _ value: String) {
        key(name)
        appendValue(value, alwaysQuote: false)
    }

    mutating func quoted(_ name: StaticString, _ value: String) {
        key(name)
        appendValue(value, alwaysQuote: true)
    }

    mutating func optionalName(_ name: StaticString, _ value: String?) {
        string(name, value ?? "-")
    }

    mutating func rest(_ name: StaticString, _ value: String) {
        out.append(0x20)
        appendSanitized(value)
    }

    mutating func end(id: CommandID?) {
        out.append(0x0A)
    }

    mutating func dynamicString(_ name: String, _ value: String) {
        dynamicKey(name)
        appendValue(value, alwaysQuote: false)
    }

    mutating func dynamicKey(_ name: String) {
        out.append(0x20)
        appendSanitized(name)
        out.append(UInt8(ascii: "="))
    }

    mutating func key(_ name: StaticString) {
        out.append(0x20)
        Bytes.append(name, to: &out)
        out.append(UInt8(ascii: "="))
    }

    /// Quotes values a reader would otherwise split or misread (PROTOCOL.md section 2).
    private mutating func appendValue(_ value: String, alwaysQuote: Bool) {
        var value = value
        // Ids and names never need quotes: copy their bytes in one go when so.
        let plain =
            !alwaysQuote
            && value.withUTF8 { bytes -> Bool in
                if bytes.isEmpty { return false }
                for (i, c) in bytes.enumerated() where c <= 0x20 || c == 0x22 || c == 0x5C || c == 0x3D || c == 0x7F || c == 0xC2 || c == 0xE2 {
                    // U+2028/U+2029 (E2 80 A8/A9) are sanitized; other E2 characters are plain.
                    if c == 0xE2, !(i + 2 < bytes.count && bytes[i + 1] == 0x80 && (bytes[i + 2] == 0xA8 || bytes[i + 2] == 0xA9)) { continue }
                    return false
                }
                out.append(contentsOf: bytes)
                return true
            }
        if plain { return }
        out.append(0x22)
        appendSanitized(value, escapingQuotes: true)
        out.append(0x22)
    }

    /// A line may never be broken by what it carries, whoever typed it: C0 controls,
    /// DEL, the C1 controls (U+0080-U+009F, such as NEL, which some terminals take for a
    /// line break) and the line and paragraph separators U+2028/U+2029 (line breaks to
    /// JavaScript before ES2019 and to Python's `splitlines`) are written as `?`.
    private mutating func appendSanitized(_ value: String, escapingQuotes: Bool = false) {
        var value = value
        value.withUTF8 { bytes in
            var i = 0
            while i < bytes.count {
                let c = bytes[i]
                if c == 0xC2, i + 1 < bytes.count, bytes[i + 1] >= 0x80 && bytes[i + 1] <= 0x9F {
                    out.append(UInt8(ascii: "?"))
                    i += 2
                    continue
                }
                if c == 0xE2, i + 2 < bytes.count, bytes[i + 1] == 0x80, bytes[i + 2] == 0xA8 || bytes[i + 2] == 0xA9 {
                    out.append(UInt8(ascii: "?"))
                    i += 3
                    continue
                }
                if escapingQuotes, c == 0x22 || c == 0x5C { out.append(0x5C) }
                out.append(c < 0x20 || c == 0x7F ? UInt8(ascii: "?") : c)
                i += 1
            }
        }
    }
}
