import ArbiterTestSupport

/// A raw loopback socket that reads relay handshake lines, keeping what follows a line
/// for the next one.
final class RelayRawClient {
    let socket: RawSocket
    private var pending: [UInt8] = []

    init(port: UInt16) throws {
        socket = try RawSocket(port: port)
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
}
