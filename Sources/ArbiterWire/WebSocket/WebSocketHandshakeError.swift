/// Why an HTTP request could not be upgraded to a WebSocket, with the response that says so.
public enum WebSocketHandshakeError: Error, Sendable, Equatable {
    /// Not a `GET` (RFC 6455 4.1): 405 with `Allow: GET`.
    case methodNotGet
    /// HTTP/1.0: the handshake needs HTTP/1.1 or later: 400.
    case httpVersionTooOld
    /// No `Upgrade: websocket`: 426 with `Upgrade: websocket` (RFC 9110 15.5.22).
    case missingUpgrade
    /// `Connection` lacks the `upgrade` token: 400.
    case missingConnectionUpgrade
    /// `Sec-WebSocket-Version` missing or not 13: 426 with `Sec-WebSocket-Version: 13`
    /// (RFC 6455 4.2.2), which tells the client which version to retry with.
    case unsupportedVersion
    /// `Sec-WebSocket-Key` missing, repeated, or not 16 bytes in Base64: 400.
    case invalidKey

    /// The HTTP status of the refusal.
    public var status: Int {
        switch self {
        case .methodNotGet: return 405
        case .httpVersionTooOld, .missingConnectionUpgrade, .invalidKey: return 400
        case .missingUpgrade, .unsupportedVersion: return 426
        }
    }

    /// The header fields the refusal must carry.
    public var responseHeaders: [(String, String)] {
        switch self {
        case .methodNotGet: return [("Allow", "GET")]
        case .missingUpgrade: return [("Upgrade", "websocket")]
        case .unsupportedVersion: return [("Sec-WebSocket-Version", "13")]
        case .httpVersionTooOld, .missingConnectionUpgrade, .invalidKey: return []
        }
    }

    /// The complete refusal: ``status``, ``responseHeaders`` and a one-line text body.
    public func response(keepAlive: Bool) -> [UInt8] {
        HTTPResponse.serialize(
            status: status,
            headers: responseHeaders + [("Content-Type", "text/plain; charset=utf-8")],
            body: Array("\(self)\n".utf8),
            keepAlive: keepAlive
        )
    }
}

extension WebSocketHandshakeError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .methodNotGet: return "WebSocket upgrade requires GET"
        case .httpVersionTooOld: return "WebSocket upgrade requires HTTP/1.1"
        case .missingUpgrade: return "missing Upgrade: websocket"
        case .missingConnectionUpgrade: return "Connection header lacks upgrade"
        case .unsupportedVersion: return "unsupported Sec-WebSocket-Version (13 is supported)"
        case .invalidKey: return "invalid Sec-WebSocket-Key"
        }
    }
}
