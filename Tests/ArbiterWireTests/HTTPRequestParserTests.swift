import Testing
import ArbiterWire

@Suite struct HTTPRequestParserTests {
    struct Outcome: Equatable {
        var heads: [HTTPRequestHead] = []
        var error: HTTPParseError?
    }

    /// Feeds `chunks` in order, collecting every head until the first error.
    private func run(_ chunks: [[UInt8]], maxHeadBytes: Int = 8192, maxHeaders: Int = 100) -> Outcome {
        var parser = HTTPRequestParser(maxHeadBytes: maxHeadBytes, maxHeaders: maxHeaders)
        var outcome = Outcome()
        for chunk in chunks {
            parser.append(chunk)
            do {
                while let head = try parser.next() { outcome.heads.append(head) }
            } catch {
                outcome.error = error
                return outcome
            }
        }
        return outcome
    }

    /// Parses `text` whole, at every split point and byte by byte; all must agree.
    private func parseEverySplit(_ text: String, maxHeadBytes: Int = 8192, maxHeaders: Int = 100) -> Outcome {
        let bytes = Array(text.utf8)
        let whole = run([bytes], maxHeadBytes: maxHeadBytes, maxHeaders: maxHeaders)
        for chunks in SplitFeeding.chunkings(of: bytes) {
            let split = run(chunks, maxHeadBytes: maxHeadBytes, maxHeaders: maxHeaders)
            #expect(split == whole, "chunk sizes \(chunks.map(\.count))")
        }
        return whole
    }

    private func expectError(_ text: String, _ expected: HTTPParseError, maxHeaders: Int = 100) {
        let outcome = parseEverySplit(text, maxHeaders: maxHeaders)
        #expect(outcome.heads.isEmpty)
        #expect(outcome.error == expected, "for \(text.debugDescription)")
    }

    private func expectBadRequest(_ text: String) {
        let outcome = parseEverySplit(text)
        #expect(outcome.heads.isEmpty)
        guard case .badRequest = outcome.error else {
            Issue.record("expected badRequest for \(text.debugDescription), got \(String(describing: outcome.error))")
            return
        }
    }

    @Test func parsesASimpleRequest() throws {
        let outcome = parseEverySplit(
            "GET /ws?panel=d%65mo&name=al+ice%21&flag HTTP/1.1\r\nHost: localhost:7070\r\n"
                + "Upgrade:websocket\r\nX-Empty:\r\nX-Pad:  spaced out \t\r\n\r\n")
        #expect(outcome.error == nil)
        let head = try #require(outcome.heads.first)
        #expect(outcome.heads.count == 1)
        #expect(head.method == "GET")
        #expect(head.target == "/ws?panel=d%65mo&name=al+ice%21&flag")
        #expect(head.path == "/ws")
        #expect(head.queryValue("panel") == "demo")
        #expect(head.queryValue("name") == "al ice!")
        #expect(head.queryValue("flag") == "")
        #expect(head.queryValue("missing") == nil)
        #expect(head.versionMajor == 1 && head.versionMinor == 1)
        #expect(head.headers.map(\.name) == ["Host", "Upgrade", "X-Empty", "X-Pad"])
        #expect(head.header("HOST") == "localhost:7070")
        #expect(head.header("upgrade") == "websocket")
        #expect(head.header("x-empty") == "")
        #expect(head.header("X-PAD") == "spaced out")
        #expect(head.keepAlive)
        #expect(head.contentLength == nil && !head.isChunked && !head.hasBody)
    }

    @Test func acceptsBareLFLineEndings() throws {
        let outcome = parseEverySplit("GET /healthz HTTP/1.1\nHost: x\n\n")
        let head = try #require(outcome.heads.first)
        #expect(head.path == "/healthz" && head.header("host") == "x")
    }

    @Test func parsesPipelinedRequests() {
        let outcome = parseEverySplit(
            "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\n\r\nHEAD /c?x=1 HTTP/1.0\n\n")
        #expect(outcome.error == nil)
        #expect(outcome.heads.map(\.path) == ["/a", "/b", "/c"])
        #expect(outcome.heads.map(\.method) == ["GET", "GET", "HEAD"])
    }

    @Test func keepsBytesAfterTheHeadForTheNextRequest() throws {
        var parser = HTTPRequestParser()
        let first = try parser.parse(Array("GET /a HTTP/1.1\r\n\r\nGET /b HT".utf8))
        #expect(first?.path == "/a")
        #expect(try parser.next() == nil)
        #expect(parser.bufferedByteCount == "GET /b HT".utf8.count)
        let second = try parser.parse(Array("TP/1.1\r\n\r\n".utf8))
        #expect(second?.path == "/b")
        #expect(parser.bufferedByteCount == 0)
    }

    @Test func takeBufferedBytesHandsOverWhatFollowsAnUpgrade() throws {
        var parser = HTTPRequestParser()
        let head = try parser.parse([UInt8]("GET /ws HTTP/1.1\r\nUpgrade: websocket\r\n\r\n".utf8) + [0x81, 0x85])
        #expect(head?.path == "/ws")
        #expect(parser.takeBufferedBytes() == [0x81, 0x85])
        #expect(parser.bufferedByteCount == 0)
    }

    @Test func ignoresEmptyLinesBeforeARequest() {
        let outcome = parseEverySplit("\r\n\nGET / HTTP/1.1\r\n\r\n")
        #expect(outcome.heads.map(\.path) == ["/"])
    }

    @Test func skipsContentLengthBodiesBetweenPipelinedRequests() {
        // The body looks like the start of a request; it must be skipped, not parsed.
        let body = "GET /x HTTP/1."
        let outcome = parseEverySplit(
            "POST /a HTTP/1.1\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)GET /b HTTP/1.1\r\n\r\n")
        #expect(outcome.error == nil)
        #expect(outcome.heads.map(\.path) == ["/a", "/b"])
        #expect(outcome.heads.first?.contentLength == 14)
        #expect(outcome.heads.first?.hasBody == true)
    }

    @Test func stopsAfterAChunkedHead() throws {
        let outcome = parseEverySplit(
            "POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\nGET /b HTTP/1.1\r\n\r\n")
        #expect(outcome.error == nil)
        #expect(outcome.heads.count == 1)
        #expect(outcome.heads.first?.isChunked == true)
        var parser = HTTPRequestParser()
        _ = try parser.parse(Array("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n".utf8))
        #expect(parser.isStopped)
        #expect(try parser.parse(Array("GET / HTTP/1.1\r\n\r\n".utf8)) == nil)
        #expect(parser.bufferedByteCount == 0)
    }

    @Test func keepAliveFollowsVersionAndConnectionTokens() throws {
        func keepAlive(_ text: String) throws -> Bool {
            var parser = HTTPRequestParser()
            return try #require(try parser.parse(Array(text.utf8))).keepAlive
        }
        #expect(try keepAlive("GET / HTTP/1.1\r\n\r\n"))
        #expect(try !keepAlive("GET / HTTP/1.1\r\nConnection: close\r\n\r\n"))
        #expect(try !keepAlive("GET / HTTP/1.1\r\nConnection: Upgrade, CLOSE\r\n\r\n"))
        #expect(try !keepAlive("GET / HTTP/1.1\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n"))
        #expect(try !keepAlive("GET / HTTP/1.0\r\n\r\n"))
        #expect(try keepAlive("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"))
        #expect(try keepAlive("GET / HTTP/1.2\r\n\r\n"))
    }

    @Test func limitsTheHeadSize() {
        let head = "GET / HTTP/1.1\r\nX-Fill: "  // 24 bytes
        let exact = head + String(repeating: "a", count: 64 - 24 - 4) + "\r\n\r\n"
        #expect(exact.utf8.count == 64)
        #expect(parseEverySplit(exact, maxHeadBytes: 64).heads.count == 1)
        let over = head + String(repeating: "a", count: 64 - 24 - 3) + "\r\n\r\n"
        #expect(parseEverySplit(over, maxHeadBytes: 64).error == .headTooLarge)
        // Reported as soon as the limit is reached, without waiting for the head's end.
        var parser = HTTPRequestParser(maxHeadBytes: 64)
        parser.append([UInt8](repeating: UInt8(ascii: "A"), count: 64))
        #expect(throws: HTTPParseError.headTooLarge) { try parser.next() }
        #expect(throws: HTTPParseError.headTooLarge) { try parser.next() }
    }

    @Test func defaultLimitIs8KiB() {
        let fill = String(repeating: "a", count: 8192)
        #expect(parseEverySplit("GET /\(fill) HTTP/1.1\r\n\r\n").error == .headTooLarge)
        #expect(HTTPParseError.headTooLarge.status == 431)
    }

    @Test func limitsTheHeaderCount() {
        let three = "GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n"
        #expect(parseEverySplit(three, maxHeaders: 3).heads.count == 1)
        expectError(three, .tooManyHeaders, maxHeaders: 2)
        #expect(HTTPParseError.tooManyHeaders.status == 431)
    }

    @Test func refusesMalformedHeads() {
        expectBadRequest("GET / HTTP/1.1\r\nX: a\r\n folded\r\n\r\n")  // obs-fold
        expectBadRequest("GET / HTTP/1.1\r\n\tX: a\r\n\r\n")  // folding first line
        expectBadRequest("GET / HTTP/1.1\r\nHost : x\r\n\r\n")  // space before colon
        expectBadRequest("GET / HTTP/1.1\r\nBad Name: x\r\n\r\n")
        expectBadRequest("GET / HTTP/1.1\r\n: x\r\n\r\n")
        expectBadRequest("GET / HTTP/1.1\r\nNoColon\r\n\r\n")
        expectBadRequest("GET / HTTP/1.1\r\nX: a\u{01}b\r\n\r\n")
        expectBadRequest("GET / HTTP/1.1\r\nX: a\u{7F}\r\n\r\n")
        expectBadRequest("GET / HTTP/1.1\r\nX: a\rb\r\n\r\n")  // bare CR
        expectBadRequest("GET / HTTP/1.1\r\nX: \0\r\n\r\n")
        expectBadRequest("GET  / HTTP/1.1\r\n\r\n")
        expectBadRequest("GET / HTTP/1.1 \r\n\r\n")
        expectBadRequest("GET /\r\n\r\n")
        expectBadRequest("G(T / HTTP/1.1\r\n\r\n")
        expectBadRequest("GET / HTTP/1.1x\r\n\r\n")
        expectBadRequest("GET / http/1.1\r\n\r\n")
        expectBadRequest("GET /a%zz HTTP/1.1\r\n\r\n")
        expectBadRequest("GET /a?x=%ff HTTP/1.1\r\n\r\n")  // not UTF-8
        expectBadRequest("GET /a#frag HTTP/1.1\r\n\r\n")
        expectBadRequest("GET relative HTTP/1.1\r\n\r\n")
        expectBadRequest("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n")
    }

    @Test func refusesVersionsOtherThanOne() {
        expectError("GET / HTTP/2.0\r\n\r\n", .unsupportedVersion)
        expectError("GET / HTTP/0.9\r\n\r\n", .unsupportedVersion)
        #expect(HTTPParseError.unsupportedVersion.status == 505)
        #expect(HTTPParseError.badRequest("x").status == 400)
    }

    @Test func refusesAmbiguousBodyFraming() {
        expectBadRequest("POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n")
        expectBadRequest("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n")
        expectBadRequest("POST / HTTP/1.1\r\nContent-Length: 3, 4\r\n\r\n")
        expectBadRequest("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n")
        expectBadRequest("POST / HTTP/1.1\r\nContent-Length: +3\r\n\r\n")
        expectBadRequest("POST / HTTP/1.1\r\nContent-Length: 0x10\r\n\r\n")
        expectBadRequest("POST / HTTP/1.1\r\nContent-Length:\r\n\r\n")
        expectBadRequest("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n")
        expectBadRequest("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n")
        expectBadRequest("POST / HTTP/1.1\r\nTransfer-Encoding: chunked, chunked\r\n\r\n")
        expectBadRequest("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n")
    }

    @Test func acceptsRepeatedIdenticalContentLength() throws {
        let outcome = parseEverySplit("POST / HTTP/1.1\r\nContent-Length: 2, 2\r\nContent-Length: 2\r\n\r\nokGET /n HTTP/1.1\r\n\r\n")
        #expect(outcome.error == nil)
        #expect(outcome.heads.first?.contentLength == 2)
        #expect(outcome.heads.map(\.path) == ["/", "/n"])
    }

    @Test func errorsAreSticky() throws {
        var parser = HTTPRequestParser()
        #expect(throws: HTTPParseError.badRequest("malformed request line")) {
            try parser.parse(Array("NOPE\r\n\r\n".utf8))
        }
        #expect(parser.isStopped)
        #expect(throws: HTTPParseError.badRequest("malformed request line")) {
            try parser.parse(Array("GET / HTTP/1.1\r\n\r\n".utf8))
        }
    }

    @Test func parsesOtherTargetForms() throws {
        func head(_ line: String) throws -> HTTPRequestHead {
            var parser = HTTPRequestParser()
            return try #require(try parser.parse(Array("\(line)\r\n\r\n".utf8)))
        }
        #expect(try head("GET http://example.com:7070/panel/demo?x=1 HTTP/1.1").path == "/panel/demo")
        #expect(try head("GET HTTP://example.com HTTP/1.1").path == "/")
        #expect(try head("GET http://example.com?q=2 HTTP/1.1").queryValue("q") == "2")
        #expect(try head("OPTIONS * HTTP/1.1").path == "*")
        #expect(try head("CONNECT example.com:443 HTTP/1.1").path == "")
        #expect(try head("GET /a+b/%2F HTTP/1.1").path == "/a+b//")
        // The authority of an absolute-form target is kept: the Host check goes by it.
        #expect(try head("GET http://example.com:7070/panel/demo?x=1 HTTP/1.1").authority == "example.com:7070")
        #expect(try head("GET HTTP://example.com HTTP/1.1").authority == "example.com")
        #expect(try head("GET http://example.com?q=2 HTTP/1.1").authority == "example.com")
        #expect(try head("GET /panel/demo HTTP/1.1").authority == nil)
        var parser = HTTPRequestParser()
        #expect(throws: HTTPParseError.badRequest("absolute-form request-target without a host")) {
            try parser.parse(Array("GET http:///api/panels HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        }
    }

    @Test func headsBuiltInCodeCompareByValue() {
        let built = HTTPRequestHead(method: "GET", target: "/ws?panel=demo", headers: [("Host", "x")])
        #expect(built.path == "/ws" && built.queryValue("panel") == "demo")
        var parser = HTTPRequestParser()
        #expect((try? parser.parse(Array("GET /ws?panel=demo HTTP/1.1\r\nHost: x\r\n\r\n".utf8))) == built)
        #expect(built != HTTPRequestHead(method: "GET", target: "/ws?panel=demo", headers: [("Host", "y")]))
        #expect(built.headerTokens("host") == ["x"])
    }
}
