/// A button's state as the server shows it.
public enum ButtonPhase: Sendable, Equatable, CustomStringConvertible {
    case idle
    /// Owned: someone holds it (`ButtonState.owner`).
    case pressed
    /// Another button of its group is owned, by `ButtonState.owner`.
    case locked
    /// A state a later server names; shown as it came.
    case other(String)

    init(wire: String) {
        switch wire {
        case "idle": self = .idle
        case "pressed": self = .pressed
        case "locked": self = .locked
        default: self = .other(wire)
        }
    }

    public var description: String {
        switch self {
        case .idle: "idle"
        case .pressed: "pressed"
        case .locked: "locked"
        case .other(let text): text
        }
    }
}
