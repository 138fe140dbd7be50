import Testing
@testable import ArbiterWire

@Suite struct WebSocketFrameDecoderTests {
    struct Outcome: Equatable {
        var frames: [WebSocketFrame] = []
        var error: WebSocketError?
    }

    private func run(_ chunks: [[UInt8]], maxPayload: Int, masked: Bool) -> Outcome {
        var decoder = WebSocketFrameDecoder(maxPayload: maxPayload, requiresMasking: masked)
        var outcome = Outcome()
        for chunk in chunks {
            decoder.append(chunk)
            do {
                while let frame = try decoder.next() { outcome.frames.append(frame) }
            } catch {
                outcome.error = error
                return outcome
            }
        }
        return outcome
    }

    /// Decodes `bytes` whole, at every (or every sampled) split point and byte by byte.
    private func decodeEverySplit(
        _ bytes: [UInt8], maxPayload: Int = 1 << 20, masked: Bool = true,
        splitPoints: [Int]? = nil
    ) -> Outcome {
        let whole = run([bytes], maxPayload: maxPayload, masked: masked)
        for chunks in SplitFeeding.chunkings(of: bytes, splitPoints: splitPoints) {
            let split = run(chunks, maxPayload: maxPayload, masked: masked)
            #expect(split == whole, "chunk count \(chunks.count), first \(chunks.first?.count ?? 0)")
        }
        return whole
    }

    private let hello = Array("Hello".utf8)

    // RFC 6455 section 5.7 examples.

    @Test func rfcSingleFrameUnmaskedText() {
        let bytes: [UInt8] = [0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F]
        #expect(decodeEverySplit(bytes, masked: false).frames == [WebSocketFrame(opcode: .text, payload: hello)])
        // The same frame from a client is refused: clients must mask.
        #expect(decodeEverySplit(bytes).error == .protocolError("unmasked client frame"))
    }

    @Test func rfcSingleFrameMaskedText() {
        let bytes: [UInt8] = [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58]
        #expect(decodeEverySplit(bytes).frames == [WebSocketFrame(opcode: .text, payload: hello)])
    }

    @Test func rfcFragmentedUnmaskedText() {
        let bytes: [UInt8] = [0x01, 0x03, 0x48, 0x65, 0x6C, 0x80, 0x02, 0x6C, 0x6F]
        #expect(
            decodeEverySplit(bytes, masked: false).frames == [
                WebSocketFrame(fin: false, opcode: .text, payload: Array("Hel".utf8)),
                WebSocketFrame(fin: true, opcode: .continuation, payload: Array("lo".utf8)),
            ])
    }

    @Test func rfcPingAndMaskedPong() {
        let ping: [UInt8] = [0x89, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F]
        #expect(decodeEverySplit(ping, masked: false).frames == [WebSocketFrame(opcode: .ping, payload: hello)])
        let pong: [UInt8] = [0x8A, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58]
        #expect(decodeEverySplit(pong).frames == [WebSocketFrame(opcode: .pong, payload: hello)])
    }

    @Test func rfc256ByteBinaryUses16BitLength() {
        let payload = (0..<256).map { UInt8(truncatingIfNeeded: $0) }
        let bytes: [UInt8] = [0x82, 0x7E, 0x01, 0x00] + payload
        #expect(decodeEverySplit(bytes, masked: false).frames == [WebSocketFrame(opcode: .binary, payload: payload)])
        var encoded: [UInt8] = []
        WebSocketFrameEncoder.encode(opcode: .binary, payload: payload, into: &encoded)
        #expect(encoded == bytes)
    }

    @Test func rfc64KiBBinaryUses64BitLength() {
        let payload = (0..<65536).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let bytes: [UInt8] = [0x82, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0] + payload
        let points = SplitFeeding.sampledPoints(count: bytes.count)
        let outcome = decodeEverySplit(bytes, masked: false, splitPoints: points)
        #expect(outcome.frames == [WebSocketFrame(opcode: .binary, payload: payload)])
        var encoded: [UInt8] = []
        WebSocketFrameEncoder.encode(opcode: .binary, payload: payload, into: &encoded)
        #expect(encoded == bytes)
    }

    @Test(arguments: [0, 1, 7, 8, 9, 125, 126, 127, 65535, 65536, 70001])
    func maskedRoundTrip(length: Int) {
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }
        let stream =
            ClientFrames.frame(.binary, payload, fin: false, key: 0xDEAD_BEEF)
            + ClientFrames.frame(.ping, Array(payload.prefix(125)), key: 0x0102_0304)
            + ClientFrames.frame(.continuation, payload, key: 0xFFFF_0000)
        let points = stream.count > 400 ? SplitFeeding.sampledPoints(count: stream.count) : nil
        let outcome = decodeEverySplit(stream, splitPoints: points)
        #expect(outcome.error == nil)
        #expect(
            outcome.frames == [
                WebSocketFrame(fin: false, opcode: .binary, payload: payload),
                WebSocketFrame(opcode: .ping, payload: Array(payload.prefix(125))),
                WebSocketFrame(opcode: .continuation, payload: payload),
            ])
    }

    @Test func unmaskingInPiecesMatchesOnePass() {
        // Pieces of sizes that leave every mask phase at a piece boundary.
        let payload = (0..<103).map { UInt8(truncatingIfNeeded: $0) }
        let frame = ClientFrames.frame(.binary, payload, key: 0x0A0B_0C0D)
        var decoder = WebSocketFrameDecoder(maxPayload: 1000)
        var offset = 0
        var step = 1
        var decoded: [WebSocketFrame] = []
        while offset < frame.count {
            let end = min(frame.count, offset + step)
            decoder.append(frame[offset..<end])
            while let next = try? decoder.next() { decoded.append(next) }
            offset = end
            step = step % 9 + 1
        }
        #expect(decoded == [WebSocketFrame(opcode: .binary, payload: payload)])
    }

    @Test func holdsOnlyThePartialFrame() throws {
        var decoder = WebSocketFrameDecoder(maxPayload: 1000)
        let two = ClientFrames.text("first") + ClientFrames.text("second")
        decoder.append(two.dropLast(3))
        #expect(try decoder.next()?.payload == Array("first".utf8))
        #expect(try decoder.next() == nil)
        #expect(decoder.partialPayload == Array("sec".utf8))
        decoder.append(two.suffix(3))
        #expect(try decoder.next()?.payload == Array("second".utf8))
        #expect(decoder.partialHeader == nil && decoder.partialPayload.isEmpty)
    }

    @Test func protocolErrors() {
        let cases: [([UInt8], String)] = [
            (ClientFrames.raw(firstByte: 0xC1, payload: hello), "RSV1"),
            (ClientFrames.raw(firstByte: 0xA1, payload: hello), "RSV2"),
            (ClientFrames.raw(firstByte: 0x91, payload: hello), "RSV3"),
            (ClientFrames.raw(firstByte: 0x83, payload: hello), "opcode 3"),
            (ClientFrames.raw(firstByte: 0x87, payload: hello), "opcode 7"),
            (ClientFrames.raw(firstByte: 0x8B, payload: hello), "opcode 11"),
            (ClientFrames.raw(firstByte: 0x8F, payload: hello), "opcode 15"),
            (ClientFrames.raw(firstByte: 0x09, payload: hello), "fragmented ping"),
            (ClientFrames.raw(firstByte: 0x08, payload: []), "fragmented close"),
            (ClientFrames.raw(firstByte: 0x89, payload: [UInt8](repeating: 1, count: 126)), "ping of 126"),
            (ClientFrames.raw(firstByte: 0x88, payload: [UInt8](repeating: 1, count: 200)), "close of 200"),
            ([0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 1], "64-bit length with top bit"),
        ]
        for (bytes, label) in cases {
            let outcome = decodeEverySplit(bytes)
            guard case .protocolError = outcome.error else {
                Issue.record("\(label): expected a protocol error, got \(String(describing: outcome.error))")
                continue
            }
            #expect(outcome.error?.closeCode == 1002, "\(label)")
            #expect(outcome.frames.isEmpty, "\(label)")
        }
    }

    @Test func errorsAreReportedBeforeThePayloadArrives() {
        var decoder = WebSocketFrameDecoder(maxPayload: 1000)
        decoder.append([0xC1])  // RSV1 in the first byte alone
        #expect(throws: WebSocketError.self) { try decoder.next() }
        var big = WebSocketFrameDecoder(maxPayload: 1000)
        big.append([0x82, 0xFE, 0x03, 0xE9])  // 1001 bytes announced, no mask key yet
        #expect(throws: WebSocketError.messageTooBig) { try big.next() }
        #expect(throws: WebSocketError.messageTooBig) { try big.next() }  // sticky
    }

    @Test func payloadLimit() {
        let exact = ClientFrames.frame(.binary, [UInt8](repeating: 7, count: 300))
        #expect(decodeEverySplit(exact, maxPayload: 300).frames.count == 1)
        let over = ClientFrames.frame(.binary, [UInt8](repeating: 7, count: 301))
        let outcome = decodeEverySplit(over, maxPayload: 300)
        #expect(outcome.error == .messageTooBig)
        #expect(outcome.error?.closeCode == 1009)
        let huge: [UInt8] = [0x82, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        #expect(decodeEverySplit(huge, maxPayload: 300).error == .messageTooBig)
    }

    @Test func framesBeforeAnErrorAreDelivered() {
        let stream = ClientFrames.text("ok") + ClientFrames.raw(firstByte: 0xC1, payload: hello)
        let outcome = decodeEverySplit(stream)
        #expect(outcome.frames == [WebSocketFrame(opcode: .text, payload: Array("ok".utf8))])
        #expect(outcome.error?.closeCode == 1002)
    }
}
