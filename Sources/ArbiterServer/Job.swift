import ArbiterCore
import ArbiterWire

/// One unit of a connection's work, run in arrival order on its reactor's queue by
/// `SessionRunner`.
enum Job: Sendable {
    /// A decoded command and when its bytes were read (monotonic nanoseconds).
    case command(ParsedCommand, receivedAt: Int64)
    /// DOWN, UP or CANCEL in text with panel and button already looked up: the press
    /// path, kept free of strings so that handing it around copies a few words.
    case press(Press<Int>, receivedAt: Int64)
    /// A line that could not be decoded: its ERROR reply keeps its place among the replies.
    case failure(RequestError)
}
