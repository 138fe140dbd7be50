/// The server side of the RFC 6455 opening handshake (section 4.2).
public enum WebSocketHandshake {
    /// The GUID every server appends to the client's key (RFC 6455 1.3).
    public static let magicGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// `Sec-WebSocket-Accept` for a client key: Base64(SHA-1(key + GUID)). Proves to the
    /// client that the server understood the handshake, so a cache cannot fake one.
    public static func acceptValue(forKey key: String) -> String {
        Base64.encode(SHA1.hash((key + magicGUID).utf8))
    }

    /// Checks that `head` is a valid version-13 upgrade request; returns the accept value.
    ///
    /// The checks, in order: `GET`, HTTP/1.1 or later, `Upgrade` contains `websocket`,
    /// `Connection` contains `upgrade` (both case-insensitive comma lists), exactly one
    /// `Sec-WebSocket-Key` that Base64-decodes to 16 bytes, and `Sec-WebSocket-Version: 13`.
    /// Path routing is the caller's; extensions and subprotocols are never negotiated.
    public static func validate(_ head: HTTPRequestHead) -> Result<String, WebSocketHandshakeError> {
        guard head.method == "GET" else { return .failure(.methodNotGet) }
        guard head.versionMajor > 1 || (head.versionMajor == 1 && head.versionMinor >= 1) else {
            return .failure(.httpVersionTooOld)
        }
        guard head.headerTokens("Upgrade").contains("websocket") else { return .failure(.missingUpgrade) }
        guard head.headerTokens("Connection").contains("upgrade") else {
            return .failure(.missingConnectionUpgrade)
        }
        let versions = head.headers(named: "Sec-WebSocket-Version")
        guard versions.count == 1, versions[0] == "13" else { return .failure(.unsupportedVersion) }
        let keys = head.headers(named: "Sec-WebSocket-Key")
        guard keys.count == 1, let nonce = Base64.decode(keys[0]), nonce.count == 16 else {
            return .failure(.invalidKey)
        }
        return .success(acceptValue(forKey: keys[0]))
    }

    /// The `101 Switching Protocols` response completing the handshake.
    public static func response(accept: String) -> [UInt8] {
        Array(
            ("HTTP/1.1 101 Switching Protocols\r\n"
                + "Upgrade: websocket\r\n"
                + "Connection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: \(accept)\r\n\r\n").utf8)
    }
}
