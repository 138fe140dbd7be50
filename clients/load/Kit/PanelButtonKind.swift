/// The kind of a panel button as the generator sees it (PROTOCOL.md section 6).
public enum PanelButtonKind: UInt8, Sendable, Equatable {
    case tap, hold, talk

    public init?(word: String) {
        switch word {
        case "tap": self = .tap
        case "hold": self = .hold
        case "talk": self = .talk
        default: return nil
        }
    }
}
