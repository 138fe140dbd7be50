import Testing
import ArbiterWire

@Suite struct HTTPResponseTests {
    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func serializesStatusHeadersAndBody() {
        let bytes = HTTPResponse.serialize(
            status: 200, headers: [("Content-Type", "text/plain")],
            body: Array("ok\n".utf8), keepAlive: true)
        #expect(
            text(bytes) == "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n"
                + "Connection: keep-alive\r\n\r\nok\n")
    }

    @Test func closeAndCustomReason() {
        let bytes = HTTPResponse.serialize(status: 404, reason: "Nope", headers: [], body: [], keepAlive: false)
        #expect(text(bytes) == "HTTP/1.1 404 Nope\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    }

    @Test func headOnlyKeepsTheLengthButNotTheBody() {
        let bytes = HTTPResponse.serialize(
            status: 200, headers: [], body: Array("hello".utf8),
            keepAlive: true, headOnly: true)
        #expect(text(bytes) == "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: keep-alive\r\n\r\n")
    }

    @Test func noContentLengthOn204And304() {
        let noContent = text(HTTPResponse.serialize(status: 204, headers: [], body: [], keepAlive: true))
        #expect(noContent == "HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n")
        let notModified = text(HTTPResponse.serialize(status: 304, headers: [], body: [], keepAlive: false))
        #expect(!notModified.contains("Content-Length"))
    }

    @Test func framingHeadersFromTheCallerAreIgnored() {
        let bytes = HTTPResponse.serialize(
            status: 405, headers: [("Allow", "GET"), ("content-length", "99"), ("Connection", "close")],
            body: [], keepAlive: true)
        #expect(
            text(bytes) == "HTTP/1.1 405 Method Not Allowed\r\nAllow: GET\r\nContent-Length: 0\r\n"
                + "Connection: keep-alive\r\n\r\n")
    }

    @Test func informationalResponsesKeepTheCallersConnection() {
        let bytes = HTTPResponse.serialize(
            status: 101, headers: [("Upgrade", "websocket"), ("Connection", "Upgrade")],
            body: [], keepAlive: true)
        #expect(text(bytes) == "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
    }

    @Test func lineBreaksInValuesCannotInjectHeaders() {
        let bytes = HTTPResponse.serialize(
            status: 301, headers: [("Location", "/x\r\nSet-Cookie: a=b")],
            body: [], keepAlive: false)
        #expect(text(bytes).contains("Location: /x  Set-Cookie: a=b\r\n"))
        #expect(!text(bytes).contains("\r\nSet-Cookie"))
    }

    @Test func reasonPhraseTable() {
        let expected: [Int: String] = [
            101: "Switching Protocols", 200: "OK", 204: "No Content", 301: "Moved Permanently",
            304: "Not Modified", 400: "Bad Request", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
            408: "Request Timeout", 421: "Misdirected Request", 426: "Upgrade Required", 429: "Too Many Requests",
            431: "Request Header Fields Too Large",
            500: "Internal Server Error", 501: "Not Implemented", 503: "Service Unavailable",
            505: "HTTP Version Not Supported",
        ]
        for (status, reason) in expected {
            #expect(HTTPResponse.reasonPhrase(for: status) == reason)
        }
        #expect(HTTPResponse.reasonPhrase(for: 299) == "Unknown")
    }
}
