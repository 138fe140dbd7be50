import Testing
@testable import ArbiterEtcd

@Suite struct HTTPResponseReaderTests {
    let chunked = Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n7\r\n{\"a\":1}\r\n1\r\n\n\r\n0\r\n\r\n".utf8)

    @Test func chunkedBodiesAreDecodedWhateverTheSplit() throws {
        // An empty feed means "the peer closed", so both parts are non-empty.
        for split in 1..<chunked.count {
            var reader = HTTPResponseReader()
            var body = try reader.feed(Array(chunked[..<split]))
            body += try reader.feed(Array(chunked[split...]))
            #expect(String(decoding: body, as: UTF8.self) == "{\"a\":1}\n", "split at \(split)")
            #expect(reader.isComplete)
            #expect(reader.status == 200)
        }
    }

    @Test func contentLengthAndCloseDelimitedBodies() throws {
        var sized = HTTPResponseReader()
        #expect(try sized.feed(Array("HTTP/1.1 404 Not Found\r\ncontent-length: 2\r\n\r\n{}extra".utf8)) == Array("{}".utf8))
        #expect(sized.isComplete)
        #expect(sized.status == 404)
        var open = HTTPResponseReader()
        #expect(try open.feed(Array("HTTP/1.1 200 OK\r\n\r\nab".utf8)) == Array("ab".utf8))
        #expect(!open.isComplete)
        #expect(try open.feed([]) == [])
        #expect(open.isComplete)
    }

    @Test func aCutOffOrBrokenResponseIsAnError() throws {
        var cut = HTTPResponseReader()
        _ = try cut.feed(Array(chunked[0..<90]))
        #expect(throws: HTTPResponseReader.Failure.self) { try cut.feed([]) }
        var bad = HTTPResponseReader()
        #expect(throws: HTTPResponseReader.Failure.self) { try bad.feed(Array("SMTP ready\r\n\r\n".utf8)) }
        var badChunk = HTTPResponseReader()
        #expect(throws: HTTPResponseReader.Failure.self) { try badChunk.feed(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".utf8)) }
    }
}
