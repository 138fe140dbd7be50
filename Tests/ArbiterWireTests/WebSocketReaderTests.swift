import Testing
import ArbiterWire

@Suite struct WebSocketReaderTests {
    struct Outcome: Equatable {
        var messages: [WebSocketMessage] = []
        var error: WebSocketError?
    }

    private func run(_ chunks: [[UInt8]], maxPayload: Int, maxMessage: Int) -> Outcome {
        var reader = WebSocketReader(maxPayload: maxPayload, maxMessage: maxMessage)
        var outcome = Outcome()
        for chunk in chunks {
            reader.append(chunk)
            do {
                while let message = try reader.next() { outcome.messages.append(message) }
            } catch {
                outcome.error = error
                return outcome
            }
        }
        return outcome
    }

    private func readEverySplit(_ bytes: [UInt8], maxPayload: Int = 1 << 16, maxMessage: Int = 1 << 16) -> Outcome {
        let whole = run([bytes], maxPayload: maxPayload, maxMessage: maxMessage)
        for chunks in SplitFeeding.chunkings(of: bytes) {
            #expect(
                run(chunks, maxPayload: maxPayload, maxMessage: maxMessage) == whole,
                "chunk sizes \(chunks.prefix(3).map(\.count))")
        }
        return whole
    }

    @Test func conversationAtEverySplit() {
        let stream =
            ClientFrames.text("Hel", fin: false, key: 1) + ClientFrames.frame(.ping, Array("p".utf8), key: 2)
            + ClientFrames.frame(.continuation, Array("lo 緊".utf8), key: 3)
            + ClientFrames.frame(.binary, [9, 8, 7], key: 4)
            + ClientFrames.frame(.close, [0x03, 0xE8] + Array("done".utf8), key: 5)
            + ClientFrames.text("after close is ignored")
        let outcome = readEverySplit(stream)
        #expect(outcome.error == nil)
        #expect(
            outcome.messages == [
                .ping(Array("p".utf8)), .text("Hello 緊"), .binary([9, 8, 7]),
                .close(code: 1000, reason: "done"),
            ])
    }

    @Test func invalidUTF8FailsBeforeTheFinalFragmentArrives() throws {
        var reader = WebSocketReader(maxPayload: 1000, maxMessage: 1000)
        reader.append(ClientFrames.text("valid", fin: false))
        #expect(try reader.next() == nil)
        reader.append(ClientFrames.frame(.continuation, [0xED, 0xA0, 0x80], fin: false))
        #expect(throws: WebSocketError.invalidUTF8) { try reader.next() }
    }

    @Test func invalidUTF8FailsWhileItsFrameIsStillArriving() throws {
        // One text frame of 40 bytes; only its first 10 have arrived, the 6th is invalid.
        let payload = Array("abcde".utf8) + [0xFF] + [UInt8](repeating: 0x61, count: 34)
        let frame = ClientFrames.frame(.text, payload)
        var reader = WebSocketReader(maxPayload: 1000, maxMessage: 1000)
        reader.append(frame.prefix(6 + 5))
        #expect(try reader.next() == nil)
        reader.append(frame[11..<16])
        #expect(throws: WebSocketError.invalidUTF8) { try reader.next() }
    }

    @Test func validTextInManySmallReadsIsAccepted() throws {
        let text = String(repeating: "κόσμε 緊急 🙂 ", count: 20)
        let frame = ClientFrames.text(text)
        var reader = WebSocketReader(maxPayload: 1 << 16, maxMessage: 1 << 16)
        var messages: [WebSocketMessage] = []
        for byte in frame {
            reader.append([byte])
            while let message = try reader.next() { messages.append(message) }
        }
        #expect(messages == [.text(text)])
    }

    @Test func oversizedMessageFailsFromItsHeader() throws {
        var reader = WebSocketReader(maxPayload: 1000, maxMessage: 100)
        reader.append(ClientFrames.frame(.binary, [UInt8](repeating: 0, count: 60), fin: false))
        #expect(try reader.next() == nil)
        let next = ClientFrames.frame(.continuation, [UInt8](repeating: 0, count: 60))
        reader.append(next.prefix(6))  // header and mask key only
        #expect(throws: WebSocketError.messageTooBig) { try reader.next() }
    }

    @Test func protocolErrorsSurfaceWithTheirCloseCode() {
        let outcome = readEverySplit(ClientFrames.text("a") + ClientFrames.frame(.continuation, Array("b".utf8)))
        #expect(outcome.messages == [.text("a")])
        #expect(outcome.error?.closeCode == 1002)
    }

    @Test func closeStopsTheReader() throws {
        var reader = WebSocketReader(maxPayload: 100, maxMessage: 100)
        reader.append(ClientFrames.frame(.close, []) + ClientFrames.raw(firstByte: 0xC1, payload: []))
        #expect(try reader.next() == .close(code: nil, reason: ""))
        #expect(reader.isClosed)
        #expect(try reader.next() == nil)
    }
}
