import ArbiterCore

/// Turns a verb with named arguments into a `Request`, validating every value.
/// Both forms end here, so `DOWN demo b1` and `{"cmd":"down",...}` get the same checks
/// and the same error messages.
enum CommandBuilder {
    /// Plain decimal digits: Swift's integer parsing would also take a leading `+`.
    static func isDigits(_ s: String) -> Bool {
        !s.isEmpty && s.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    typealias Args = [String: String]

    static func build(_ syntax: CommandSyntax, _ args: Args, format: WireFormat, id: CommandID?) throws(RequestError) -> Request {
        func fail(_ message: String) -> RequestError {
            RequestError(.badSyntax, message, format: format, id: id)
        }
        func panel() throws(RequestError) -> String {
            let p = args["panel"] ?? ""
            guard Identifier.isValidID(p) else { throw fail("panel id must match [A-Za-z0-9_-]{1,64}; usage: \(syntax.usage)") }
            return p
        }
        func button() throws(RequestError) -> String {
            let b = args["button"] ?? ""
            guard Identifier.isValidID(b) else { throw fail("button id must match [A-Za-z0-9_-]{1,64}; usage: \(syntax.usage)") }
            return b
        }
        func fence() throws(RequestError) -> UInt64? {
            guard let f = args["fence"] else { return nil }
            guard Self.isDigits(f), let v = UInt64(f) else { throw fail("fence must be a non-negative integer, not \(f)") }
            return v
        }
        switch syntax.verb {
        case .hello:
            let name = args["name"] ?? ""
            guard Identifier.isValidName(name) else { throw fail("name must match [A-Za-z0-9_.-]{1,32}; usage: \(syntax.usage)") }
            var format: WireFormat?
            if let f = args["format"] {
                guard let parsed = WireFormat(rawValue: f.lowercased()) else { throw fail("format must be text or json, not \(f)") }
                format = parsed
            }
            if let key = args["key"], key.isEmpty || key.utf8.count > 256 {
                throw fail("key must be 1 to 256 bytes")
            }
            return .hello(name: name, key: args["key"], format: format)
        case .help:
            guard let topic = args["topic"] else { return .help(topic: nil) }
            guard CommandSyntax.byVerb[topic.uppercased()] != nil else {
                let hint = CommandSyntax.closest(to: topic).map { "did you mean HELP \($0)? Send" } ?? "send"
                throw fail("HELP has no topic \(topic): it is not a command; \(hint) HELP alone for the list")
            }
            return .help(topic: topic.uppercased())
        case .panels: return .panels
        case .join: return .join(panel: try panel())
        case .leave: return .leave(panel: try panel())
        case .down: return .press(.down(panel: try panel(), button: try button()))
        case .up: return .press(.up(panel: try panel(), button: try button(), fence: try fence()))
        case .cancel: return .press(.cancel(panel: try panel(), button: try button(), fence: try fence()))
        case .history:
            var count = Request.defaultHistoryCount
            if let n = args["n"] {
                guard Self.isDigits(n), let v = Int(n) else { throw fail("n must be a non-negative integer, not \(n)") }
                count = min(v, Request.maxHistoryCount)
            }
            return .history(panel: try panel(), count: count)
        case .ping: return .ping(token: args["token"])
        case .quit: return .quit
        case .reset: return .reset(panel: try panel())
        case .arm:
            let g = args["group"] ?? ""
            guard Identifier.isValidID(g) else { throw fail("group id must match [A-Za-z0-9_-]{1,64}; usage: \(syntax.usage)") }
            return .arm(panel: try panel(), group: g)
        case .ranking:
            let g = args["group"] ?? ""
            guard Identifier.isValidID(g) else { throw fail("group id must match [A-Za-z0-9_-]{1,64}; usage: \(syntax.usage)") }
            return .ranking(panel: try panel(), group: g)
        case .kick:
            let s = args["session"] ?? ""
            guard let session = SessionID(parsing: s) else { throw fail("session must look like s12, not \(s)") }
            return .kick(session: session)
        }
    }
}
