/// Writes messages as one JSON object per line: `{"type":"verb",...}\n`.
struct JSONSink: ByteSink {
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
        JSONString.append(verb.lowercased(), to: &out)
    }

    mutating func arg(_ name: StaticString, _ value: String) { string(name, value) }

    mutating func string(_ name: StaticString, _ value: String) {
        key(name)
        JSONString.append(value, to: &out)
    }

    mutating func quoted(_ name: StaticString, _ value: String) { string(name, value) }

    mutating func rest(_ name: StaticString, _ value: String) { string(name, value) }

    mutating func optionalName(_ name: StaticString, _ value: String?) {
        guard let value else {
            key(name)
            return Bytes.append("null", to: &out)
        }
        string(name, value)
    }

    mutating func end(id: CommandID?) {
        switch id {
        case .none: break
        case .string(let s)?:
            Bytes.append(",\"id\":", to: &out)
            JSONString.append(s, to: &out)
        case .number(let n)?:
            Bytes.append(",\"id\":", to: &out)
            out.append(contentsOf: n.utf8)
        }
        Bytes.append("}\n", to: &out)
    }

    mutating func dynamicString(_ name: String, _ value: String) {
        dynamicKey(name)
        JSONString.append(value, to: &out)
    }

    mutating func dynamicKey(_ name: String) {
        out.append(0x2C)
        JSONString.append(name, to: &out)
        out.append(UInt8(ascii: ":"))
    }

    mutating func key(_ name: StaticString) {
        Bytes.append(",\"", to: &out)
        Bytes.append(name, to: &out)
        Bytes.append("\":", to: &out)
    }
}
