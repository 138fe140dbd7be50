/// How a connection talks to its server.
enum PeerTransport: Equatable {
    /// Text lines.
    case line
    /// `GET /ws` upgrade, then masked frames carrying the JSON form.
    case webSocket
    /// RESP to Redis.
    case redis
}
