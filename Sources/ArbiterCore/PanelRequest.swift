/// A command addressed to one panel's core.
public enum PanelRequest: Sendable, Equatable {
    case join
    case leave
    case down(button: ButtonRef)
    case up(button: ButtonRef, fence: UInt64?)
    case cancel(button: ButtonRef, fence: UInt64?)
    case reset
    /// Opens a round of a buzzer group (admin).
    case arm(group: String)
}

/// A button named by its id, or already looked up (the server resolves ids once per
/// command, so the core's press path handles plain integers).
public enum ButtonRef: Sendable, Equatable, ExpressibleByStringLiteral {
    case index(Int)
    case id(String)

    public init(stringLiteral value: String) {
        self = .id(value)
    }

    /// How the button is named in an error message.
    var text: String {
        switch self {
        case .index(let i): "#\(i)"
        case .id(let s): s
        }
    }
}
