import ArbiterCluster
import ArbiterClusterRuntime
import ArbiterTestSupport
import Dispatch

/// A raw loopback socket that reads relay handshake lines, keeping what follows a line
/// for the next one.
final class RelayRawClient {
    let socket: RawSocket
    private var pending: [UInt8] = []

    init(port: UInt16, source: String? = nil) throws {
        socket = try RawSocket(port: port, source: source)
    }

    func send(_ bytes: [UInt8]) { socket.send(bytes) }

    func send(_ text: String) { socket.send(text) }

    /// The next line without its newline, or what came before the connection closed.
    func line() throws -> String {
        for _ in 0..<100 {
            if let newline = pending.firstIndex(of: 0x0A) {
                defer { pending.removeSubrange(...newline) }
                return String(decoding: pending[..<newline], as: UTF8.self)
            }
            let more = try socket.read(timeout: 5)
            if more.isEmpty { break }
            pending += more
        }
        defer { pending = [] }
        return String(decoding: pending, as: UTF8.self)
    }

    func waitForClose() -> Bool { socket.waitForClose() }

    /// A raw client through a complete handshake with `node`, as node `name`.
    static func linked(to node: RelayTestNode, as name: String, source: String? = nil) throws -> RelayRawClient? {
        let client = try RelayRawClient(port: node.port, source: source)
        var dialer = RelayDialer(node: name, key: RelayTestNode.key, nonce: RelayNonce.draw())
        client.send(dialer.hello)
        let challenge = try client.line()
        guard case .established(_, let proof, _) = try dialer.receive(Array((challenge + "\n").utf8)) else { return nil }
        client.send(proof)
        return client
    }

    /// The relay frames that arrive (after the handshake lines) until the peer closes or
    /// `seconds` pass, decoded; and whether it closed.
    func frames(for seconds: Double) throws -> (frames: [RelayMessage], closed: Bool) {
        var decoder = RelayFrameDecoder()
        decoder.append(pending)
        pending = []
        var frames: [RelayMessage] = []
        let end = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        while DispatchTime.now().uptimeNanoseconds < end {
            let left = Double(end - min(end, DispatchTime.now().uptimeNanoseconds)) / 1e9
            guard let bytes = try? socket.read(timeout: max(0.001, left)) else { break }
            if bytes.isEmpty { return (frames, true) }
            decoder.append(bytes)
            while let message = try decoder.next() { frames.append(message) }
        }
        return (frames, false)
    }
}
