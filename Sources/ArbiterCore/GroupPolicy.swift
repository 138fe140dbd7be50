/// How a group hands itself out (config `groups.<g>.policy`).
public enum GroupPolicy: Sendable, Equatable {
    /// One owner; a DOWN on a busy group is `DENIED reason=busy`. Every group not
    /// described in the config.
    case exclusive
    /// One owner; a DOWN on a busy group waits in line, and the head is granted as soon
    /// as the owner lets go. At most `maxQueue` wait.
    case queue(maxQueue: Int)
    /// Rounds opened by ARM: the first DOWN wins (a tap), later ones are ranked. A DOWN
    /// while closed is early and locks its session out for `earlyLockoutMs`. Members are
    /// told the first `announce` places (`BUZZED` for ranks 2 and on); a press ranked
    /// after them gets its own `RANKED` reply only, and `RANKING` shows the whole table.
    /// Presses are ranked by arrival, each once `decisionWindowUs` has passed since it
    /// arrived (0: at once, in the order they are decided).
    case buzzer(earlyLockoutMs: Int64, announce: Int = GroupPolicy.defaultAnnounce, decisionWindowUs: Int64 = 0)

    public static let defaultMaxQueue = 16
    public static let defaultEarlyLockoutMs: Int64 = 250
    /// A quiz screen shows the first few places; a round of a thousand players told to
    /// every member is a million lines that nobody reads live.
    public static let defaultAnnounce = 10
    /// The config file's `decision_window_us` when it says none: short enough that a
    /// winner hardly waits. Two reactors read the sockets of one round in their own time;
    /// on 2 cores, 300 players a round back to back, 2 ms kept the winner right in all
    /// but 1 of 1,836 rounds and 98.6-99.7 % of the pairs in order; 5 ms left 0 to 32
    /// of about 35,000 pairs a round out of order (docs/BENCHMARKS.md). A panel made in code (the tests) decides at once unless it
    /// asks for a window.
    public static let defaultDecisionWindowUs: Int64 = 2000

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
