import Testing
import ArbiterWire

@Suite struct WebSocketFrameEncoderTests {
    private let hello = Array("Hello".utf8)

    @Test func rfcUnmaskedAndMaskedHello() {
        #expect(WebSocketFrameEncoder.textFrame(hello) == [0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])
        var masked: [UInt8] = []
        WebSocketFrameEncoder.encode(opcode: .text, payload: hello, maskingKey: 0x37FA_213D, into: &masked)
        #expect(masked == [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
    }

    @Test func rfcFragmentsAndPing() {
        var out: [UInt8] = []
        WebSocketFrameEncoder.encode(opcode: .text, payload: Array("Hel".utf8), fin: false, into: &out)
        WebSocketFrameEncoder.encode(opcode: .continuation, payload: Array("lo".utf8), into: &out)
        #expect(out == [0x01, 0x03, 0x48, 0x65, 0x6C, 0x80, 0x02, 0x6C, 0x6F])
        #expect(WebSocketFrameEncoder.pingFrame(hello) == [0x89, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])
        #expect(WebSocketFrameEncoder.pongFrame(hello) == [0x8A, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])
        #expect(WebSocketFrameEncoder.pingFrame() == [0x89, 0x00])
    }

    @Test func lengthForms() {
        #expect(WebSocketFrameEncoder.binaryFrame([UInt8](repeating: 0, count: 125)).prefix(2) == [0x82, 125])
        #expect(WebSocketFrameEncoder.binaryFrame([UInt8](repeating: 0, count: 126)).prefix(4) == [0x82, 126, 0, 126])
        #expect(WebSocketFrameEncoder.binaryFrame([UInt8](repeating: 0, count: 65535)).prefix(4) == [0x82, 126, 0xFF, 0xFF])
        #expect(
            WebSocketFrameEncoder.binaryFrame([UInt8](repeating: 0, count: 65536)).prefix(10)
                == [0x82, 127, 0, 0, 0, 0, 0, 1, 0, 0])
    }

    @Test func closeFrames() {
        #expect(WebSocketFrameEncoder.closeFrame(code: nil) == [0x88, 0x00])
        #expect(WebSocketFrameEncoder.closeFrame(code: 1000) == [0x88, 0x02, 0x03, 0xE8])
        #expect(WebSocketFrameEncoder.closeFrame(code: 1002, reason: "bad") == [0x88, 0x05, 0x03, 0xEA, 0x62, 0x61, 0x64])
    }

    @Test func longCloseReasonIsCutAtACodePoint() throws {
        let frame = WebSocketFrameEncoder.closeFrame(code: 1001, reason: String(repeating: "緊", count: 60))
        #expect(frame.count <= 2 + 125)
        #expect(Int(frame[1]) == frame.count - 2)
        var assembler = WebSocketMessageAssembler(maxMessage: 1000)
        let message = try assembler.push(WebSocketFrame(opcode: .close, payload: Array(frame[2...])))
        #expect(message == .close(code: 1001, reason: String(repeating: "緊", count: 41)))
    }

    @Test func longPingPayloadIsTruncated() {
        let frame = WebSocketFrameEncoder.pingFrame([UInt8](repeating: 1, count: 300))
        #expect(frame.count == 2 + 125 && frame[1] == 125)
    }

    @Test func opcodes() {
        #expect(WebSocketOpcode(rawValue: 3) == nil)
        #expect(WebSocketOpcode.close.isControl && WebSocketOpcode.ping.isControl && WebSocketOpcode.pong.isControl)
        #expect(!WebSocketOpcode.text.isControl && !WebSocketOpcode.continuation.isControl)
    }
}
