import ArbiterWire
import Foundation
import Glibc
import Synchronization

/// Answers WebSocket upgrades the way the arbiter will once `/ws` lands: it checks
/// each request with the server's own parser and handshake code, then sends `101` and
/// the JSON welcome as a text frame. Enough for idle WebSocket peers end to end.
final class FakeWebSocketServer: Sendable {
    let port: UInt16
    private let listener: Int32
    private let open = Mutex<[Int32]>([])
    /// Why a request was refused, if one was.
    let refusals = Mutex<[String]>([])

    struct SetupError: Error {}

    init(connections: Int) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SetupError() }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = 0
        inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr)
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        guard bound == 0, listen(fd, 64) == 0 else { throw SetupError() }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        listener = fd
        port = UInt16(bigEndian: addr.sin_port)
        let thread = Thread { [self] in serve(connections) }
        thread.start()
    }

    private func serve(_ connections: Int) {
        for n in 0..<connections {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            open.withLock { $0.append(client) }
            var parser = HTTPRequestParser()
            var chunk = [UInt8](repeating: 0, count: 4096)
            var head: HTTPRequestHead?
            // Bounded: a request head is a few hundred bytes.
            for _ in 0..<16 where head == nil {
                let got = chunk.withUnsafeMutableBytes { read(client, $0.baseAddress, $0.count) }
                guard got > 0 else { break }
                head = try? parser.parse(chunk[..<got])
            }
            guard let head, head.target == "/ws", case .success(let accept) = WebSocketHandshake.validate(head) else {
                refusals.withLock { $0.append("connection \(n): not a valid upgrade to /ws") }
                continue
            }
            var reply = WebSocketHandshake.response(accept: accept)
            reply += WebSocketFrameEncoder.textFrame(Array(#"{"type":"welcome","session":"s\#(n + 1)","name":"guest-\#(n + 1)","proto":1}"#.utf8))
            _ = reply.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
        }
    }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for fd in open.withLock({ $0 }) { close(fd) }
    }
}
