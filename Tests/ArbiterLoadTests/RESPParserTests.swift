import Testing
@testable import ArbiterLoadKit

@Suite struct RESPParserTests {
    static func replies(_ text: String) -> [RESPReply] {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { buffer in
            var out: [RESPReply] = []
            var at = 0
            for _ in 0..<16 {
                guard case .reply(let r, let end) = RESPParser.parse(buffer, from: at) else { break }
                out.append(r)
                at = end
            }
            return out
        }
    }

    @Test func scalarReplies() {
        let r = Self.replies("+OK\r\n$-1\r\n:1\r\n-ERR wrong\r\n$5\r\nhello\r\n")
        #expect(r.map(\.kind) == [.simple, .null, .integer, .error, .bulk])
        #expect(r[0].range == 1..<3 && r[2].integer == 1 && r[3].range == 15..<24 && r[4].range == 30..<35)
    }

    @Test func pubSubMessage() {
        let r = Self.replies("*3\r\n$7\r\nmessage\r\n$4\r\nload\r\n$5\r\n12 ab\r\n*3\r\n$9\r\nsubscribe\r\n$4\r\nload\r\n:1\r\n")
        #expect(r.count == 2)
        #expect(r[0].kind == .array && r[0].count == 3)
        #expect(r[0].element(0).range == 8..<15 && r[0].element(2).range == 31..<36)
        #expect(r[1].element(2).kind == .integer && r[1].element(2).integer == 1)
    }

    @Test func everyPrefixNeedsMore() {
        let bytes = Array("*3\r\n$7\r\nmessage\r\n$4\r\nload\r\n$5\r\nhello\r\n".utf8)
        for cut in 0..<bytes.count {
            let prefix = Array(bytes[..<cut])
            prefix.withUnsafeBufferPointer { #expect(RESPParser.parse($0, from: 0) == .needMore, "cut \(cut)") }
        }
        Array("?x\r\n".utf8).withUnsafeBufferPointer { #expect(RESPParser.parse($0, from: 0) == .invalid) }
    }

    @Test func commandsAreArraysOfBulkStrings() {
        #expect(
            String(decoding: RESPCommand.encode(["SET", "k", "c1", "NX", "PX", "10000"]), as: UTF8.self)
                == "*6\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\nc1\r\n$2\r\nNX\r\n$2\r\nPX\r\n$5\r\n10000\r\n")
    }
}
