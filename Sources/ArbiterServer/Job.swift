import ArbiterWire

/// One unit of a connection's work, run in arrival order by whoever holds its run token.
enum Job: Sendable {
    /// A decoded command.
    case command(ParsedCommand)
    /// A line that could not be decoded: its ERROR reply keeps its place among the replies.
    case failure(RequestError)
    /// The connection is gone: release what it owns in every panel it touched. Always last.
    case disconnect
}
