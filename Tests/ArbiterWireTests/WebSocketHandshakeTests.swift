import Testing
import ArbiterWire

@Suite struct WebSocketHandshakeTests {
    /// The client handshake of RFC 6455 section 1.2 (with the section 1.3 key).
    static let rfcRequest =
        "GET /chat HTTP/1.1\r\nHost: server.example.com\r\nUpgrade: websocket\r\n"
        + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        + "Origin: http://example.com\r\nSec-WebSocket-Version: 13\r\n\r\n"

    private func head(_ text: String) throws -> HTTPRequestHead {
        var parser = HTTPRequestParser()
        return try #require(try parser.parse(Array(text.utf8)))
    }

    private func request(method: String = "GET", version: String = "1.1", replacing: [String: String?] = [:]) throws -> HTTPRequestHead {
        var fields: [(String, String)] = [
            ("Host", "localhost"), ("Upgrade", "websocket"), ("Connection", "Upgrade"),
            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Sec-WebSocket-Version", "13"),
        ]
        for (name, value) in replacing {
            fields.removeAll { $0.0 == name }
            if let value { fields.append((name, value)) }
        }
        let text = "\(method) /ws HTTP/\(version)\r\n" + fields.map { "\($0.0): \($0.1)\r\n" }.joined() + "\r\n"
        return try head(text)
    }

    /// RFC 6455 section 1.3; the value also checked against Python's hashlib.
    @Test func rfc6455AcceptExample() {
        #expect(WebSocketHandshake.acceptValue(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func validatesTheRFCRequest() throws {
        let result = WebSocketHandshake.validate(try head(Self.rfcRequest))
        #expect(result == .success("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="))
    }

    @Test func switchingProtocolsResponse() {
        let bytes = WebSocketHandshake.response(accept: "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(
            String(decoding: bytes, as: UTF8.self) == "HTTP/1.1 101 Switching Protocols\r\n"
                + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n")
    }

    @Test func headerValuesAreCaseInsensitiveTokenLists() throws {
        let head = try request(replacing: ["Upgrade": "WebSocket", "Connection": "keep-alive, UPGRADE"])
        #expect(WebSocketHandshake.validate(head) == .success("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="))
        let listed = try request(replacing: ["Upgrade": "foo/2, websocket"])
        #expect(WebSocketHandshake.validate(listed) == .success("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="))
    }

    @Test func refusals() throws {
        let cases: [(HTTPRequestHead, WebSocketHandshakeError)] = [
            (try request(method: "POST"), .methodNotGet),
            (try request(version: "1.0"), .httpVersionTooOld),
            (try request(replacing: ["Upgrade": nil]), .missingUpgrade),
            (try request(replacing: ["Upgrade": "h2c"]), .missingUpgrade),
            (try request(replacing: ["Connection": "keep-alive"]), .missingConnectionUpgrade),
            (try request(replacing: ["Connection": nil]), .missingConnectionUpgrade),
            (try request(replacing: ["Sec-WebSocket-Version": "8"]), .unsupportedVersion),
            (try request(replacing: ["Sec-WebSocket-Version": nil]), .unsupportedVersion),
            (try request(replacing: ["Sec-WebSocket-Key": nil]), .invalidKey),
            (try request(replacing: ["Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25j"]), .invalidKey),  // 15 bytes
            (try request(replacing: ["Sec-WebSocket-Key": "not base64!"]), .invalidKey),
        ]
        for (head, expected) in cases {
            #expect(WebSocketHandshake.validate(head) == .failure(expected))
        }
    }

    @Test func duplicateKeyIsRefused() throws {
        let text = Self.rfcRequest.replacingFirstEmptyLine(with: "Sec-WebSocket-Key: AAAAAAAAAAAAAAAAAAAAAA==\r\n")
        #expect(WebSocketHandshake.validate(try head(text)) == .failure(.invalidKey))
    }

    @Test func refusalResponses() {
        #expect(WebSocketHandshakeError.unsupportedVersion.status == 426)
        let versionResponse = String(decoding: WebSocketHandshakeError.unsupportedVersion.response(keepAlive: false), as: UTF8.self)
        #expect(versionResponse.hasPrefix("HTTP/1.1 426 Upgrade Required\r\nSec-WebSocket-Version: 13\r\n"))
        #expect(versionResponse.contains("Connection: close\r\n"))
        #expect(WebSocketHandshakeError.methodNotGet.status == 405)
        #expect(WebSocketHandshakeError.methodNotGet.responseHeaders.first! == ("Allow", "GET"))
        #expect(WebSocketHandshakeError.missingUpgrade.status == 426)
        #expect(WebSocketHandshakeError.invalidKey.status == 400)
        #expect(WebSocketHandshakeError.missingConnectionUpgrade.status == 400)
        #expect(WebSocketHandshakeError.httpVersionTooOld.status == 400)
    }
}

extension String {
    /// Inserts `text` just before the empty line that ends an HTTP head.
    fileprivate func replacingFirstEmptyLine(with text: String) -> String {
        // "\r\n" is one Character, so dropping one removes the final CRLF.
        String(dropLast(1)) + text + "\r\n"
    }
}
