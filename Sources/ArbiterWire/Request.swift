import ArbiterCore

/// One command a peer sent, in either form (PROTOCOL.md sections 2 and 3).
public enum Request: Sendable, Equatable {
    case hello(name: String, key: String?, format: WireFormat?)
    /// `HELP` alone lists every command; with a topic (a verb, uppercased), that one.
    case help(topic: String?)
    case panels
    case join(panel: String)
    case leave(panel: String)
    /// DOWN, UP or CANCEL.
    case press(Press<String>)
    case history(panel: String, count: Int)
    case ping(token: String?)
    case quit
    case reset(panel: String)
    case arm(panel: String, group: String)
    case ranking(panel: String, group: String)
    case kick(session: SessionID)

    /// The panel the command is addressed to, for routing to that panel's queue.
    public var panel: String? {
        switch self {
        case .join(let p), .leave(let p), .history(let p, _), .reset(let p), .arm(let p, _), .ranking(let p, _):
            p
        case .press(let press):
            press.panel
        case .hello, .help, .panels, .ping, .quit, .kick:
            nil
        }
    }

    public static let defaultHistoryCount = 20
    public static let maxHistoryCount = 1000
}

/// How a connection's messages are written.
public enum WireFormat: String, Sendable, Equatable {
    case text
    case json
}
