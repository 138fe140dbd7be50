/// A command in the protocol's JSON form (`{"cmd":"down","panel":"demo","button":"b1","id":"c7"}`).
struct Command: Sendable {
    enum Field: Sendable {
        case string(String)
        case number(UInt64)
    }

    let verb: String
    let panel: String?
    let fields: [(String, Field)]

    init(_ verb: String, panel: String? = nil, _ fields: [(String, Field)] = []) {
        self.verb = verb
        self.panel = panel
        self.fields = fields
    }

    /// How long the server may rightly keep this command's reply: a JOIN waits up to 10 s
    /// for a new leader, a relayed command 5 s for its leader's answer. The link is not
    /// called dead for silence while such a wait is running.
    var allowance: Double { verb == "join" ? 11 : 6 }

    func line(id: String) -> String {
        var text = "{\"cmd\":\(Self.quote(verb))"
        if let panel { text += ",\"panel\":\(Self.quote(panel))" }
        for (key, value) in fields {
            switch value {
            case .string(let s): text += ",\(Self.quote(key)):\(Self.quote(s))"
            case .number(let n): text += ",\(Self.quote(key)):\(n)"
            }
        }
        return text + ",\"id\":\(Self.quote(id))}"
    }

    static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            // Every other control character, and the separators that end a line in some readers.
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
