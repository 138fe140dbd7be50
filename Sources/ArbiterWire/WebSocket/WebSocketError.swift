/// Why a WebSocket connection must be failed. Codecs throw these; ``closeCode`` is the one
/// place that turns them into the status code of the closing frame (RFC 6455 7.4.1).
public enum WebSocketError: Error, Sendable, Equatable {
    /// The peer broke RFC 6455 framing or messaging rules; the text is for logs only.
    case protocolError(String)
    /// A text message or close reason is not valid UTF-8.
    case invalidUTF8
    /// A frame or message exceeds the configured limit.
    case messageTooBig
    /// The peer sent a kind of data the server does not accept (e.g. binary). Codecs
    /// never throw it; it exists so server policy maps through the same ``closeCode``.
    case unsupportedData

    /// The close status code to send before closing the connection.
    public var closeCode: UInt16 {
        switch self {
        case .protocolError: return 1002
        case .invalidUTF8: return 1007
        case .messageTooBig: return 1009
        case .unsupportedData: return 1003
        }
    }
}

extension WebSocketError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .protocolError(let reason): return "protocol error: \(reason)"
        case .invalidUTF8: return "invalid UTF-8"
        case .messageTooBig: return "message too big"
        case .unsupportedData: return "unsupported data"
        }
    }
}
