import ArbiterWire

/// Builds one JSON object as text, for the few JSON documents that are not messages.
struct JSONObjectWriter {
    private var text = "{"
    private var first = true

    private mutating func key(_ name: String) {
        if !first { text += "," }
        first = false
        var quoted: [UInt8] = []
        JSONString.append(name, to: &quoted)
        text += String(decoding: quoted, as: UTF8.self) + ":"
    }

    mutating func string(_ name: String, _ value: String) {
        key(name)
        var quoted: [UInt8] = []
        JSONString.append(value, to: &quoted)
        text += String(decoding: quoted, as: UTF8.self)
    }

    mutating func int(_ name: String, _ value: Int64) {
        key(name)
        text += String(value)
    }

    mutating func int(_ name: String, _ value: Int) { int(name, Int64(value)) }

    /// Fences and seqs may pass Int64.max.
    mutating func unsigned(_ name: String, _ value: UInt64) {
        key(name)
        text += String(value)
    }

    /// A value already in JSON (or the opening of one, continued with `append`).
    mutating func raw(_ name: String, _ json: String) {
        key(name)
        text += json
    }

    mutating func append(_ json: String) { text += json }

    func finish() -> String { text + "}" }
}
