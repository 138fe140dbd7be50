import Testing
import ArbiterWire
@testable import ArbiterLoadKit

/// The generator's WebSocket client side: handshake and masked framing, checked against
/// the server's own codec (which requires client frames to be masked).
@Suite struct WebSocketClientTests {
    @Test func handshakeRequestAndRFCAccept() {
        // RFC 6455 1.3: nonce "the sample nonce".
        let handshake = WebSocketClientHandshake(host: "127.0.0.1", port: 7070, nonce: Array("the sample nonce".utf8))
        #expect(handshake.key == "dGhlIHNhbXBsZSBub25jZQ==")
        let request = String(decoding: handshake.request, as: UTF8.self)
        #expect(request.hasPrefix("GET /ws HTTP/1.1\r\n"))
        #expect(request.contains("\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"))
        #expect(request.contains("\r\nSec-WebSocket-Version: 13\r\n"))
        #expect(request.hasSuffix("\r\n\r\n"))

        let response = Array(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n".utf8)
        let withFrame = response + WebSocketFrameEncoder.textFrame(Array("{}".utf8))
        #expect(handshake.check(withFrame) == .accepted(bodyStart: response.count))
        for cut in 0..<response.count {
            #expect(handshake.check(Array(response[..<cut])) == .needMore)
        }
    }

    @Test func refusals() {
        let handshake = WebSocketClientHandshake(host: "127.0.0.1", port: 7070, nonce: Array("the sample nonce".utf8))
        let notServed = Array("HTTP/1.1 501 Not Implemented\r\nContent-Length: 0\r\n\r\n".utf8)
        #expect(handshake.check(notServed) == .refused("HTTP/1.1 501 Not Implemented"))
        let wrongAccept = Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: AAAA\r\n\r\n".utf8)
        #expect(handshake.check(wrongAccept) == .refused("HTTP/1.1 101 Switching Protocols with a wrong Sec-WebSocket-Accept"))
    }

    @Test func clientFramesAreMaskedAndDecodeOnTheServer() throws {
        var codec = WebSocketClientCodec(seed: 42)
        var out: [UInt8] = []
        let small = Array(#"{"cmd":"down","panel":"load","button":"b1"}"#.utf8)
        let large = [UInt8](repeating: UInt8(ascii: "x"), count: 70_000)
        codec.appendText(small, to: &out)
        codec.appendText(small, to: &out)
        codec.appendText(large, to: &out)
        codec.appendPong([1, 2, 3], to: &out)
        #expect(out[1] & 0x80 != 0)
        // Masked: the payload does not appear in clear.
        #expect(Array(out[6..<(6 + small.count)]) != small)
        var server = WebSocketFrameDecoder(maxPayload: 1 << 20, requiresMasking: true)
        server.append(out)
        var frames: [WebSocketFrame] = []
        for _ in 0..<8 {
            guard let frame = try server.next() else { break }
            frames.append(frame)
        }
        #expect(
            frames == [
                WebSocketFrame(opcode: .text, payload: small), WebSocketFrame(opcode: .text, payload: small),
                WebSocketFrame(opcode: .text, payload: large), WebSocketFrame(opcode: .pong, payload: [1, 2, 3]),
            ])
        // A fresh key per frame: the two equal payloads are masked differently.
        let second = 2 + 4 + small.count
        #expect(Array(out[2..<6]) != Array(out[(second + 2)..<(second + 6)]))
    }

    @Test func serverFramesDecodeFromEverySplit() throws {
        var wire: [UInt8] = []
        wire += WebSocketFrameEncoder.textFrame(Array(#"{"type":"welcome","session":"s1","name":"guest-1","proto":1}"#.utf8))
        WebSocketFrameEncoder.encode(opcode: .text, payload: Array("{\"a\":".utf8), fin: false, into: &wire)
        wire += WebSocketFrameEncoder.pingFrame([9])
        WebSocketFrameEncoder.encode(opcode: .continuation, payload: Array("1}".utf8), into: &wire)
        wire += WebSocketFrameEncoder.closeFrame(code: 1000)
        let expected: [WebSocketClientCodec.Incoming] = [
            .text(Array(#"{"type":"welcome","session":"s1","name":"guest-1","proto":1}"#.utf8)),
            .ping([9]), .text(Array("{\"a\":1}".utf8)), .close,
        ]
        for cut in 0...wire.count {
            var codec = WebSocketClientCodec(seed: 1)
            var got: [WebSocketClientCodec.Incoming] = []
            for part in [wire[..<cut], wire[cut...]] {
                codec.append(part)
                for _ in 0..<8 {
                    guard let message = try codec.next() else { break }
                    got.append(message)
                }
            }
            #expect(got == expected, "split at \(cut)")
        }
    }

    @Test func maskedServerFramesAreRefused() {
        var codec = WebSocketClientCodec(seed: 1)
        var masked: [UInt8] = []
        WebSocketFrameEncoder.encode(opcode: .text, payload: [0x41], maskingKey: 1, into: &masked)
        codec.append(masked)
        #expect(throws: WebSocketError.self) { _ = try codec.next() }
    }
}
