/// A command's verb, uppercased as `OK <VERB>` and HELP name it: the one list the
/// parsers, the command table and the press path share, so no mapping between verb
/// types is written by hand.
public enum Verb: String, Sendable, CaseIterable {
    case hello = "HELLO"
    case help = "HELP"
    case panels = "PANELS"
    case join = "JOIN"
    case leave = "LEAVE"
    case down = "DOWN"
    case up = "UP"
    case cancel = "CANCEL"
    case history = "HISTORY"
    case ping = "PING"
    case quit = "QUIT"
    case reset = "RESET"
    case arm = "ARM"
    case ranking = "RANKING"
    case kick = "KICK"

    /// DOWN, UP and CANCEL: the verbs a `Press` carries.
    @inlinable
    public var isPress: Bool {
        switch self {
        case .down, .up, .cancel: true
        case .hello, .help, .panels, .join, .leave, .history, .ping, .quit, .reset, .arm, .kick, .ranking: false
        }
    }
}
