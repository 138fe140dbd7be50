import ArbiterCore
import ArbiterIO
import ArbiterWire

extension PanelHost {
    /// The panel as JSON for /api/panels: config, every button's state, members, last
    /// fence and seq. On `queue`.
    package func stateJSON() -> [UInt8] {
        var flush = FlushList()
        let snapshot = advancedSnapshot(flush: &flush)
        finishBatch(&flush)
        var j = JSONObjectWriter()
        j.string("id", config.id)
        j.string("title", config.title)
        j.int("members", snapshot.members)
        j.unsigned("fence", snapshot.fence)
        j.unsigned("seq", snapshot.seq)
        j.raw("buttons", "[")
        for (i, b) in snapshot.buttons.enumerated() {
            let button = config.buttons[b.button]
            var item = JSONObjectWriter()
            item.string("id", button.id)
            item.string("label", button.label)
            item.string("kind", button.kind.rawValue)
            item.string("group", button.group)
            item.string("state", b.state.rawValue)
            if let owner = b.owner { item.string("owner", owner) } else { item.raw("owner", "null") }
            if let session = b.ownerSession { item.string("owner_session", session.description) } else { item.raw("owner_session", "null") }
            item.raw("progress", String(Double(b.permille) / 1000))
            switch button.kind {
            case .tap:
                item.int("timeout_ms", button.timeoutMs)
            case .hold:
                item.int("hold_ms", button.holdMs)
                item.int("progress_ms", button.progressMs)
            case .talk:
                item.int("timeout_ms", button.timeoutMs)
                item.int("long_ms", button.longMs)
                item.int("min_talk_ms", button.minTalkMs)
            }
            j.append(i > 0 ? "," : "")
            j.append(item.finish())
        }
        j.append("]")
        return Array(j.finish().utf8)
    }
}

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
