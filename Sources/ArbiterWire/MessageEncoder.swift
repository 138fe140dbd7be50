import ArbiterCore

/// Writes replies, events and server messages in either form into a byte buffer.
public enum MessageEncoder {
    public static func encode(_ reply: PanelReply, panel: PanelConfig, format: WireFormat, id: CommandID?, into out: inout [UInt8]) {
        switch format {
        case .text: with(TextSink.self, &out) { describe(reply, panel: panel, id: id, into: &$0) }
        case .json: with(JSONSink.self, &out) { describe(reply, panel: panel, id: id, into: &$0) }
        }
    }

    public static func encode(_ event: PanelEvent, panel: PanelConfig, format: WireFormat, into out: inout [UInt8]) {
        switch format {
        case .text: with(TextSink.self, &out) { describe(event, panel: panel, into: &$0, fieldsOnly: false) }
        case .json: with(JSONSink.self, &out) { describe(event, panel: panel, into: &$0, fieldsOnly: false) }
        }
    }

    public static func encode(_ message: ServerMessage, format: WireFormat, id: CommandID? = nil, into out: inout [UInt8]) {
        switch format {
        case .text: with(TextSink.self, &out) { describe(message, id: id, into: &$0) }
        case .json: with(JSONSink.self, &out) { describe(message, id: id, into: &$0) }
        }
    }

    /// Convenience for tests and tools: one message as a string.
    public static func text(_ message: ServerMessage, format: WireFormat = .text, id: CommandID? = nil) -> String {
        var out: [UInt8] = []
        encode(message, format: format, id: id, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Moves `out` into a sink and back, so appending never copies the buffer.
    @inline(__always)
    static func with<S: MessageSink>(_: S.Type, _ out: inout [UInt8], _ body: (inout S) -> Void) {
        var sink = S()
        swap(&sink.out, &out)
        body(&sink)
        swap(&sink.out, &out)
    }
}

extension MessageEncoder {
    static func describe<S: MessageSink>(_ message: ServerMessage, id: CommandID?, into s: inout S) {
        switch message {
        case .welcome(let session, let name):
            s.begin("WELCOME", "welcome")
            s.string("session", session.description)
            s.string("name", name)
            s.int("proto", 1)
        case .hello(let name, let session, let role):
            s.beginOK("HELLO", "hello")
            s.string("name", name)
            s.string("session", session.description)
            s.string("role", role)
        case .helpLine(let line):
            s.begin("#", "help")
            s.rest("line", line)
        case .ok(let verb, let panel):
            s.beginOK(verb: verb)
            if let panel { s.arg("panel", panel) }
        case .okCount(let verb, let panel, let count):
            s.beginOK(verb: verb)
            if let panel { s.arg("panel", panel) }
            s.int("count", count)
        case .okKick(let session):
            s.beginOK("KICK", "kick")
            s.arg("session", session.description)
        case .panel(let id, let buttons, let members, let title, let leader):
            s.begin("PANEL", "panel")
            s.arg("panel", id)
            s.int("buttons", buttons)
            s.int("members", members)
            s.quoted("title", title)
            if case .cluster(let node) = leader { s.optionalName("leader", node) }
        case .record(let r):
            s.begin("RECORD", "record")
            s.arg("panel", r.panel)
            s.arg("button", r.button)
            s.string("event", r.event)
            s.int("at", r.at)
            for field in r.fields {
                switch field.value {
                case .string(let v): s.dynamicString(field.name, v)
                case .int(let v): s.dynamicInt(field.name, v)
                case .unsigned(let v): s.dynamicUnsigned(field.name, v)
                case .bool(let v): s.dynamicBool(field.name, v)
                }
            }
        case .pong(let token):
            s.begin("PONG", "pong")
            if let token { s.arg("token", token) }
        case .error(let code, let message):
            describeError(code, message, into: &s)
        case .bye(let reason):
            s.beginOK("BYE", "bye")
            s.string("reason", reason)
        }
        s.end(id: id)
    }
}

extension MessageEncoder {
    /// `RELEASED <p> <b> reason=failover owner=<o> fence=<f>`: a grant of a term whose
    /// leader stopped deciding. No `seq`: the leader that numbered the chain is gone, and
    /// each node tells its own members (docs/CLUSTER.md, "What members see at a failover").
    public static func encodeFailoverRelease(panel: PanelConfig, button: Int, owner: String, fence: UInt64, format: WireFormat, into out: inout [UInt8]) {
        func describe<S: MessageSink>(into s: inout S) {
            s.begin("RELEASED", "released")
            s.arg("panel", panel.id)
            s.arg("button", panel.buttons[button].id)
            s.string("reason", ReleaseReason.failover.rawValue)
            s.string("owner", owner)
            s.int("fence", fence)
            s.end(id: nil)
        }
        switch format {
        case .text: with(TextSink.self, &out) { describe(into: &$0) }
        case .json: with(JSONSink.self, &out) { describe(into: &$0) }
        }
    }
}

extension MessageEncoder {
    /// `DEQUEUED <p> <b> name=<n> session=<s> position=<k> reason=failover`: a waiter's place
    /// in a queue group's line, gone with the term that kept the line. No `seq`, like the
    /// failover release: each node tells its own waiters, whether they joined or not, as
    /// a hand-off's GRANTED reaches the head whether it joined or not.
    public static func encodeFailoverDequeue(
        panel: PanelConfig, button: Int, name: String, session: SessionID, position: Int, format: WireFormat, into out: inout [UInt8]
    ) {
        func describe<S: MessageSink>(into s: inout S) {
            s.begin("DEQUEUED", "dequeued")
            s.arg("panel", panel.id)
            s.arg("button", panel.buttons[button].id)
            s.string("name", name)
            s.string("session", session.description)
            s.int("position", position)
            s.string("reason", DequeueReason.failover.rawValue)
            s.end(id: nil)
        }
        switch format {
        case .text: with(TextSink.self, &out) { describe(into: &$0) }
        case .json: with(JSONSink.self, &out) { describe(into: &$0) }
        }
    }
}
