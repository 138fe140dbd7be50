import ArbiterWire
import Foundation

/// A minimal RFC 6455 client over `LineClient`'s socket, for tests: it upgrades, sends
/// masked frames and reads the server's frames, every wait bounded.
public final class WebSocketClient: @unchecked Sendable {
    public let socket: RawSocket
    private var decoder = WebSocketFrameDecoder(maxPayload: 1 << 24, requiresMasking: false)
    public private(set) var responseHead = ""

    /// Connects and performs the handshake on `path`; throws unless the answer is 101.
    public init(port: UInt16, path: String, extraHeaders: [String] = []) throws {
        socket = try RawSocket(port: port)
        let key = Base64.encode((0..<16).map { _ in UInt8.random(in: 0...255) })
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        request += "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        for h in extraHeaders { request += h + "\r\n" }
        socket.send(Array((request + "\r\n").utf8))
        let head = try socket.readHead()
        responseHead = head
        guard head.hasPrefix("HTTP/1.1 101") else { throw RawSocket.Failure(description: "no upgrade: \(head)") }
        guard head.contains(WebSocketHandshake.acceptValue(forKey: key)) else { throw RawSocket.Failure(description: "bad accept") }
        decoder.append(socket.takeBuffered())
    }

    public func send(_ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true) {
        var out: [UInt8] = []
        WebSocketFrameEncoder.encode(opcode: opcode, payload: payload, fin: fin, maskingKey: UInt32.random(in: 1...UInt32.max), into: &out)
        socket.send(out)
    }

    public func sendText(_ text: String) { send(.text, Array(text.utf8)) }

    /// The next frame from the server.
    public func readFrame(timeout: Double = 5) throws -> WebSocketFrame {
        let deadline = Deadline(after: timeout)
        while true {
            if let frame = try decoder.next() { return frame }
            let remaining = deadline.remaining
            guard remaining > 0 else { throw RawSocket.Failure(description: "no frame within \(timeout)s") }
            let bytes = try socket.read(timeout: remaining)
            guard !bytes.isEmpty else { throw RawSocket.Failure(description: "connection closed") }
            decoder.append(bytes)
        }
    }

    /// The next text message (skipping pings, which are answered).
    public func readText(timeout: Double = 5) throws -> String {
        for _ in 0..<1000 {
            let frame = try readFrame(timeout: timeout)
            switch frame.opcode {
            case .text: return String(decoding: frame.payload, as: UTF8.self)
            case .ping: send(.pong, frame.payload)
            case .close: throw RawSocket.Failure(description: "closed: \(Self.closeCode(frame) ?? 0)")
            default: continue
            }
        }
        throw RawSocket.Failure(description: "no text message")
    }

    /// Text messages up to and including the first containing `marker`.
    public func readTexts(through marker: String, timeout: Double = 5) throws -> [String] {
        var texts: [String] = []
        for _ in 0..<10_000 {
            let text = try readText(timeout: timeout)
            texts.append(text)
            if text.contains(marker) { return texts }
        }
        throw RawSocket.Failure(description: "no \(marker)")
    }

    /// Reads until a close frame; its status code.
    public func readClose(timeout: Double = 5) throws -> UInt16? {
        for _ in 0..<10_000 {
            let frame = try readFrame(timeout: timeout)
            if frame.opcode == .close { return Self.closeCode(frame) }
        }
        return nil
    }

    static func closeCode(_ frame: WebSocketFrame) -> UInt16? {
        guard frame.payload.count >= 2 else { return nil }
        return UInt16(frame.payload[0]) << 8 | UInt16(frame.payload[1])
    }
}
