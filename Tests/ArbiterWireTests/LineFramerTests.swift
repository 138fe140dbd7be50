import Testing
@testable import ArbiterWire

@Suite("line framing, fed at every split")
struct LineFramerTests {
    enum Got: Equatable {
        case line(String)
        case tooLong
    }

    func feed(_ chunks: [[UInt8]], max: Int = 4096) -> [Got] {
        var framer = LineFramer(maxLineBytes: max)
        var got: [Got] = []
        for chunk in chunks {
            chunk.withUnsafeBufferPointer { buffer in
                framer.feed(buffer) { piece in
                    switch piece {
                    case .line(let l): got.append(.line(String(decoding: l, as: UTF8.self)))
                    case .tooLong: got.append(.tooLong)
                    }
                }
            }
        }
        return got
    }

    @Test func everySplitGivesTheSameLines() {
        let input = Array("HELLO alice\r\nDOWN demo b1\n\nUP demo b1\r\nPING".utf8)
        let expected: [Got] = [.line("HELLO alice"), .line("DOWN demo b1"), .line(""), .line("UP demo b1")]
        #expect(feed([input]) == expected)
        for cut in 0...input.count {
            #expect(feed([Array(input[..<cut]), Array(input[cut...])]) == expected, "split at \(cut)")
        }
        for cut1 in 0...input.count {
            for cut2 in cut1...input.count {
                #expect(feed([Array(input[..<cut1]), Array(input[cut1..<cut2]), Array(input[cut2...])]) == expected)
            }
        }
        #expect(feed(input.map { [$0] }) == expected)
    }

    @Test func tooLongLineIsReportedOnceAndSkippedToItsEnd() {
        let long = Array(String(repeating: "x", count: 20).utf8)
        let input = Array("PING a\n".utf8) + long + Array("\nPING b\n".utf8)
        let expected: [Got] = [.line("PING a"), .tooLong, .line("PING b")]
        for cut in 0...input.count {
            #expect(feed([Array(input[..<cut]), Array(input[cut...])], max: 10) == expected, "split at \(cut)")
        }
        #expect(feed(input.map { [$0] }, max: 10) == expected)
    }

    @Test func exactlyTheLimitIsAccepted() {
        let line = String(repeating: "y", count: 10)
        for ending in ["\n", "\r\n"] {
            let input = Array((line + ending).utf8)
            for cut in 0...input.count {
                #expect(feed([Array(input[..<cut]), Array(input[cut...])], max: 10) == [.line(line)])
            }
        }
        #expect(feed([Array((line + "z\n").utf8)], max: 10) == [.tooLong])
        #expect(feed([Array((line + "z\r\n").utf8)], max: 10) == [.tooLong])
    }

    @Test func idleFramerHoldsNothing() {
        var framer = LineFramer()
        Array("PING\n".utf8).withUnsafeBufferPointer { framer.feed($0) { _ in } }
        #expect(framer.bufferedCount == 0)
        #expect(!framer.hasPartialLine)
    }
}
