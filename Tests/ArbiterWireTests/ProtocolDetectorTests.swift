import Testing
import ArbiterWire

@Suite struct ProtocolDetectorTests {
    private func classify(_ text: String) -> ProtocolDetector.Detection {
        ProtocolDetector.classify(Array(text.utf8))
    }

    /// The shortest prefix of `text` at which the detector decides, and what it decided.
    private func decision(_ text: String) -> (length: Int, detection: ProtocolDetector.Detection)? {
        let bytes = Array(text.utf8)
        for length in 0...bytes.count {
            let detection = ProtocolDetector.classify(bytes[..<length])
            if detection != .needMoreBytes { return (length, detection) }
        }
        return nil
    }

    @Test func requestLineWithCRLFIsHTTP() {
        #expect(classify("GET / HTTP/1.1\r\n") == .http)
        #expect(classify("GET / HTTP/1.1\r\nHost: x\r\n\r\n") == .http)
        #expect(classify("GET /ws?panel=demo HTTP/1.0\r\n") == .http)
        #expect(classify("OPTIONS * HTTP/1.1\r\n") == .http)
        #expect(classify("M-SEARCH * HTTP/1.1\r\n") == .http)
    }

    @Test func requestLineWithBareLFIsHTTP() {
        #expect(classify("GET / HTTP/1.1\n") == .http)
    }

    @Test func everyProperPrefixOfARequestLineNeedsMoreBytes() {
        let line = "GET /panel/demo HTTP/1.1\r\n"
        #expect(decision(line)?.length == line.utf8.count)
        #expect(decision(line)?.detection == .http)
    }

    @Test func emptyAndPartialPrefixesNeedMoreBytes() {
        #expect(classify("") == .needMoreBytes)
        #expect(classify("GET") == .needMoreBytes)
        #expect(classify("GET / HTTP/1.1") == .needMoreBytes)
        #expect(classify("GET / HTTP/1.1\r") == .needMoreBytes)
    }

    @Test func lowercaseMethodIsLineAtFirstByte() {
        #expect(decision("get / HTTP/1.1\r\n")?.length == 1)
        #expect(classify("get / HTTP/1.1") == .line)
        #expect(classify("g") == .line)
    }

    @Test func lineCommandsAreLine() {
        #expect(classify("HELLO alice\n") == .line)
        #expect(classify("PING\n") == .line)
        #expect(classify("PING\r\n") == .line)
        #expect(classify("QUIT\n") == .line)
    }

    @Test func threeTokenLineCommandIsLineAtTheThirdToken() {
        #expect(classify("DOWN demo b1\n") == .line)
        // Decided at the "b" of b1, where "HTTP/1." should have started.
        #expect(decision("DOWN demo b1\n")?.length == "DOWN demo b".utf8.count)
    }

    @Test func jsonCommandIsLineAtFirstByte() {
        #expect(decision(#"{"cmd":"ping"}"#)?.length == 1)
        #expect(decision(#"{"cmd":"ping"}"#)?.detection == .line)
    }

    @Test func malformedRequestLinesAreLine() {
        #expect(classify("GET  / HTTP/1.1\r\n") == .line)  // second space too early
        #expect(classify(" GET / HTTP/1.1\r\n") == .line)  // empty method
        #expect(classify("GET /a\tb HTTP/1.1\r\n") == .line)  // control char in target
        #expect(classify("GET /\u{7F} HTTP/1.1\r\n") == .line)  // DEL in target
        #expect(classify("GET / HTTP/1.1 \r\n") == .line)  // trailing space
        #expect(classify("GET / HTTP/1.1\rX") == .line)  // CR not followed by LF
        #expect(classify("GET / HTTP/2.0\r\n") == .line)  // not HTTP/1.x
        #expect(classify("GET / HTTP/1.10\r\n") == .line)
        #expect(classify("GET / http/1.1\r\n") == .line)
        #expect(classify("GET /\n") == .line)  // HTTP/0.9 style
        #expect(classify("\r\nGET / HTTP/1.1\r\n") == .line)
        #expect(ProtocolDetector.classify([0x47, 0x00]) == .line)
        #expect(ProtocolDetector.classify([0xE7, 0xB7, 0x8A]) == .line)
    }

    @Test func overlongFirstLineIsLine() {
        let limit = ProtocolDetector.maxRequestLineBytes
        var bytes = Array("GET /".utf8)
        bytes += [UInt8](repeating: UInt8(ascii: "a"), count: limit - bytes.count)
        #expect(bytes.count == limit)
        #expect(ProtocolDetector.classify(bytes) == .needMoreBytes)
        bytes.append(UInt8(ascii: "a"))
        #expect(ProtocolDetector.classify(bytes) == .line)
    }

    @Test func worksOnAnyCollection() {
        let bytes = Array("xxGET / HTTP/1.1\r\n".utf8)
        #expect(ProtocolDetector.classify(bytes[2...]) == .http)
        #expect(ProtocolDetector.classify("GET / HTTP/1.1\n".utf8) == .http)
    }
}
