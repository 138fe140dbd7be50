/// A complete WebSocket message, as the application sees it.
public enum WebSocketMessage: Sendable, Equatable {
    /// A text message, validated as UTF-8.
    case text(String)
    /// A binary message; whether to accept it is server policy.
    case binary([UInt8])
    /// A ping; the server should answer with a pong carrying the same payload.
    case ping([UInt8])
    /// An (unsolicited or answering) pong.
    case pong([UInt8])
    /// A close request. `code` is nil when the frame had no payload (the peer gave no
    /// status, RFC 6455 7.1.5 then reports 1005 which must never be sent on the wire).
    case close(code: UInt16?, reason: String)
}
