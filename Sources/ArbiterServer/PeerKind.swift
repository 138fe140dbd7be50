/// What a connection turned out to be, for the logs.
enum PeerKind: String {
    /// Closed before its first bytes (or the WELCOME deadline) said what it is.
    case unknown
    case line
    case http
    case websocket
    /// A relay link from another node, handed to the relay network (cluster mode).
    case relay
}
