/// What became of an `up` or `cancel`.
public enum ReleaseResult: Sendable, Equatable, CustomStringConvertible {
    /// The server released the grant (`OK UP`); its `RELEASED` event follows.
    case released
    /// The grant had already ended (`fired`, `timeout`, `reset`, `failover`, or ended while
    /// the connection was down): lifting the finger after a hold fired is normal. `reason`
    /// is nil when nobody could say (the server no longer had the record).
    case alreadyEnded(reason: String?)
    /// The press was never sent: its `down` was still waiting for a connection or for a
    /// retry, and now throws `ArbiterClientError.withdrawn`.
    case withdrawn

    public var description: String {
        switch self {
        case .released: "released"
        case .alreadyEnded(let reason): "already ended" + (reason.map { " (\($0))" } ?? "")
        case .withdrawn: "withdrawn before it was sent"
        }
    }
}
