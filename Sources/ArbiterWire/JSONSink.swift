/// Writes messages as one JSON object per line: `{"type":"verb",...}\n`.
struct JSONSink: MessageSink {
    var out: [UInt8] = []

    mutating func begin(_ verb: StaticString, _ type: StaticString) {
        Bytes.append("{\"type\":\"", to: &out)
        Bytes.append(type, to: &out)
        out.append(0x22)
    }

    mutating func beginOK(_ verb: StaticString, _ re: StaticString) {
        Bytes.append("{\"type\":\"ok\",\"re\":\"", to: &out)
        Bytes.append(re, to: &out)
        out.append(0x22)
    }

    mutating func beginOK(verb: String) {
        Bytes.append("{\"type\":\"ok\",\"re\":", to: &out)
        JSONSink.appendString(verb.lowercased(), to: &out)
    }

    mutating func arg(_ name: StaticString, _ value: String) { string(name, value) }

    mutating func string(_ name: StaticString, _ value: String) {
        key(name)
        JSONSink.appendString(value, to: &out)
    }

    mutating func quoted(_ name: StaticString, _ value: String) { string(name, value) }

    mutating func int(_ name: StaticString, _ value: Int64) {
        key(name)
        Bytes.appendDecimal(value, to: &out)
    }

    mutating func unsigned(_ name: StaticString, _ value: UInt64) {
        key(name)
        Bytes.appendDecimal(value, to: &out)
    }

    mutating func bool(_ name: StaticString, _ value: Bool) {
        key(name)
        Bytes.append(value ? "true" : "false", to: &out)
    }

    mutating func decimal(_ name: StaticString, permille: Int) {
        key(name)
        Bytes.appendPermille(permille, to: &out)
    }

    mutating func rest(_ name: StaticString, _ value: String) { string(name, value) }

    mutating func end(id: CommandID?) {
        switch id {
        case .none: break
        case .string(let s)?:
            Bytes.append(",\"id\":", to: &out)
            JSONSink.appendString(s, to: &out)
        case .number(let n)?:
            Bytes.append(",\"id\":", to: &out)
            out.append(contentsOf: n.utf8)
        }
        Bytes.append("}\n", to: &out)
    }

    mutating func dynamicString(_ name: String, _ value: String) {
        dynamicKey(name)
        JSONSink.appendString(value, to: &out)
    }

    mutating func dynamicInt(_ name: String, _ value: Int64) {
        dynamicKey(name)
        Bytes.appendDecimal(value, to: &out)
    }

    mutating func dynamicBool(_ name: String, _ value: Bool) {
        dynamicKey(name)
        Bytes.append(value ? "true" : "false", to: &out)
    }

    private mutating func dynamicKey(_ name: String) {
        out.append(0x2C)
        JSONSink.appendString(name, to: &out)
        out.append(UInt8(ascii: ":"))
    }

    private mutating func key(_ name: StaticString) {
        Bytes.append(",\"", to: &out)
        Bytes.append(name, to: &out)
        Bytes.append("\":", to: &out)
    }

    static func appendString(_ s: String, to out: inout [UInt8]) {
        JSONString.append(s, to: &out)
    }
}
