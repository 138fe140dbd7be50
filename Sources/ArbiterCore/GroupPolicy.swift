/// How a group hands itself out (config `groups.<g>.policy`).
public enum GroupPolicy: Sendable, Equatable {
    /// One owner; a DOWN on a busy group is `DENIED reason=busy`. Every group not
    /// described in the config.
    case exclusive
    /// One owner; a DOWN on a busy group waits in line, and the head is granted as soon
    /// as the owner lets go. At most `maxQueue` wait.
    case queue(maxQueue: Int)
    /// Rounds opened by ARM: the first DOWN wins (a tap), later ones are ranked. A DOWN
    /// while closed is early and locks its session out for `earlyLockoutMs`.
    case buzzer(earlyLockoutMs: Int64)

    public static let defaultMaxQueue = 16
    public static let defaultEarlyLockoutMs: Int64 = 250

    public var name: String {
        switch self {
        case .exclusive: "exclusive"
        case .queue: "queue"
        case .buzzer: "buzzer"
        }
    }

    /// The kinds a group of this policy may hold. A buzzer's winner is a tap, fired at
    /// the grant; a hold or a talk has no meaning as "who was first".
    public func fits(_ kind: ButtonKind) -> Bool {
        switch self {
        case .exclusive, .queue: true
        case .buzzer: kind == .tap
        }
    }
}
