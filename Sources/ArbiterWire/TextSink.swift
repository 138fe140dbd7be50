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
        let plain = !alwaysQuote && value.withUTF8 { bytes -> Bool in
            if bytes.isEmpty { return false }
            for c in bytes where c <= 0x20 || c == 0x22 || c == 0x5C || c == 0x3D || c == 0x7F || c == 0xC2 { return false }
            out.append(contentsOf: bytes)
            return true
        }
        if plain { return }
        out.append(0x22)
        appendSanitized(value, escapingQuotes: true)
        out.append(0x22)
    }

    /// A line may never be broken by what it carries, whoever typed it: C0 controls,
    /// DEL and the C1 controls (U+0080-U+009F, such as NEL, which some terminals take
    /// for a line break) are written as `?`.
    private mutating func appendSanitized(_ value: String, escapingQuotes: Bool = false) {
        var c1Lead = false
        for c in value.utf8 {
            if c1Lead {
                c1Lead = false
                if c >= 0x80 && c <= 0x9F {
                    out.append(UInt8(ascii: "?"))
                    continue
                }
                out.append(0xC2)
            }
            if c == 0xC2 {
                c1Lead = true
                continue
            }
            if escapingQuotes, c == 0x22 || c == 0x5C { out.append(0x5C) }
            out.append(c < 0x20 || c == 0x7F ? UInt8(ascii: "?") : c)
        }
        if c1Lead { out.append(0xC2) }
    }
}
