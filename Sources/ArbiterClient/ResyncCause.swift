/// Why a panel's state was replaced by a fresh snapshot (`PanelEvent.resynced`).
public enum ResyncCause: Sendable, Equatable, CustomStringConvertible {
    /// The connection was lost and made again (perhaps to another host): the panel was
    /// joined again under a new session.
    case reconnected(host: String)
    /// An event's `seq` skipped some: the client joined again on the same connection
    /// rather than pass on events as if nothing had been missed.
    case gap(expected: UInt64, received: UInt64)
    /// The server pushed a snapshot (cluster mode: a failover, or a node that
    /// resynchronised with the panel's leader).
    case pushedByServer(term: UInt64?)

    public var description: String {
        switch self {
        case .reconnected(let host): "reconnected to \(host)"
        case .gap(let expected, let received): "seq gap: expected \(expected), received \(received)"
        case .pushedByServer(let term): "snapshot pushed by the server" + (term.map { " (term \($0))" } ?? "")
        }
    }
}
