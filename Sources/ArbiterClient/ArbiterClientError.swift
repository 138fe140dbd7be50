/// Why a client call failed.
public enum ArbiterClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `connect` reached no host; the text says what each one answered.
    case unreachable(String)
    /// No connection came within `ArbiterClientOptions.commandWait`: the command was
    /// never sent.
    case notConnected(waitedSeconds: Double)
    /// The connection dropped after the command was sent: it may or may not have been
    /// done. It is not sent again (a `DOWN` sent late would be a new press); the panel's
    /// next `resynced` event shows the truth.
    case connectionLost
    /// The server answered `ERROR <code> <message>`.
    case server(code: String, message: String)
    /// `ERROR unavailable` still, after retrying for `ArbiterClientOptions.unavailableRetry`
    /// (or at once when the server said the command may or may not have been done).
    case unavailable(message: String, mayHaveBeenDone: Bool)
    /// The `down` was still waiting to be sent when an `up` or `cancel` of the same button
    /// came: it never was.
    case withdrawn
    /// The client (or the panel) was closed.
    case closed
    /// A reply the client could not read.
    case unexpectedReply(String)

    public var description: String {
        switch self {
        case .unreachable(let detail): "no host reachable: \(detail)"
        case .notConnected(let waited): "not connected within \(waited) s; the command was not sent"
        case .connectionLost: "the connection dropped after the command was sent; it may or may not have been done"
        case .server(let code, let message): "ERROR \(code) \(message)"
        case .unavailable(let message, _): "ERROR unavailable \(message)"
        case .withdrawn: "withdrawn: an up or cancel came before the press could be sent"
        case .closed: "the client was closed"
        case .unexpectedReply(let line): "unexpected reply: \(line)"
        }
    }
}
