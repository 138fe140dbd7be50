import ArbiterCore

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
