import ArbiterWire

/// One unit of a connection's work, run in arrival order on its reactor's queue by
/// `SessionRunner`.
enum Job: Sendable {
    /// A decoded command and when its bytes were read (monotonic nanoseconds).
    case command(ParsedCommand, receivedAt: Int64)
    /// DOWN, UP or CANCEL in text with panel and button already looked up: the press
    /// path, kept free of strings so that handing it around copies a few words.
    case press(PressJob)
    /// A line that could not be decoded: its ERROR reply keeps its place among the replies.
    case failure(RequestError)
}

/// A press command, resolved to indexes.
struct PressJob: Sendable {
    enum Verb: Sendable {
        case down, up, cancel
    }

    var panel: Int
    var button: Int
    var verb: Verb
    var fence: UInt64?
    /// When its bytes were read (monotonic nanoseconds).
    var receivedAt: Int64
}
