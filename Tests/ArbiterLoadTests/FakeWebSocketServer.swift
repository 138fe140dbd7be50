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

    init(connections: Int) throws {
        let socket = try LoopbackListener()
        listener = socket.fd
        port = socket.port
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
