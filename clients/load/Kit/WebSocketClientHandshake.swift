import ArbiterIO
import ArbiterWire

/// The client side of the RFC 6455 opening handshake: the upgrade request, and the
/// check of the server's answer (status 101 and the right `Sec-WebSocket-Accept`).
public struct WebSocketClientHandshake: Sendable {
    public enum Outcome: Equatable {
        /// The response head is not complete yet.
        case needMore
        /// Upgraded; the frames start at this index of the buffer.
        case accepted(bodyStart: Int)
        /// Anything else, with the status line (e.g. `HTTP/1.1 501 Not Implemented`).
        case refused(String)
    }

    public let key: String
    public let request: [UInt8]

    /// `nonce` is the 16 random bytes of `Sec-WebSocket-Key`.
    public init(host: String, port: UInt16, path: String = "/ws", nonce: [UInt8]) {
        key = Base64.encode(nonce)
        request = Array(
            ("GET \(path) HTTP/1.1\r\n"
                + "Host: \(HostLiteral.authority(host, port: port))\r\n"
                + "Upgrade: websocket\r\n"
                + "Connection: Upgrade\r\n"
                + "Sec-WebSocket-Key: \(key)\r\n"
                + "Sec-WebSocket-Version: 13\r\n\r\n").utf8)
    }

    /// Reads the response head at the front of `bytes`.
    public func check(_ bytes: [UInt8]) -> Outcome {
        guard let end = WebSocketClientHandshake.headEnd(bytes) else {
            return bytes.count > 16 * 1024 ? .refused("response head over 16 KiB") : .needMore
        }
        let head = String(decoding: bytes[..<end], as: UTF8.self)
        let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        let status = String(lines.first ?? "")
        let parts = status.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1] == "101" else { return .refused(status) }
        var accept: String?
        var upgrade = false
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = WebSocketClientHandshake.trimmed(line[line.index(after: colon)...])
            if name == "sec-websocket-accept" { accept = value }
            if name == "upgrade", value.lowercased() == "websocket" { upgrade = true }
        }
        guard upgrade else { return .refused("\(status) without Upgrade: websocket") }
        guard accept == WebSocketHandshake.acceptValue(forKey: key) else {
            return .refused("\(status) with a wrong Sec-WebSocket-Accept")
        }
        return .accepted(bodyStart: end + 4)
    }

    /// The index of the `\r\n\r\n` ending the head.
    static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 0...(bytes.count - 4) where bytes[i] == 0x0D && bytes[i + 1] == 0x0A && bytes[i + 2] == 0x0D && bytes[i + 3] == 0x0A {
            return i
        }
        return nil
    }

    static func trimmed(_ text: Substring) -> String {
        String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
