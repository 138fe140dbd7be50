/// The last output the state machine itself decides to send before a close.
enum LastWords: Sendable, Equatable {
    /// `ERROR server-full` to a line peer past `maxConnections`.
    case serverFull
    /// `OK BYE reason=idle` to a line peer silent past the idle timeout.
    case idleBye
    /// `408` to an HTTP peer whose request head did not arrive in time.
    case requestTimeout
    /// `OK BYE reason=shutdown` to a line peer.
    case shutdownBye
    /// Close 1001 to a WebSocket.
    case goingAway
}
