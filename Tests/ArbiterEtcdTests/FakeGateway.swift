import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// A loopback stand-in for one etcd member's gateway: answers each request (one per
/// connection, as the client sends them) with what `respond` returns for its path and body,
/// or, when that is nil, keeps the connection open without a word, like a member that has
/// lost its majority.
final class FakeGateway: @unchecked Sendable {
    let port: UInt16
    private let listener: Int32
    private let lock = NSLock()
    private var requests: [(path: String, body: String)] = []
    private var held: [Int32] = []
    private var stopped = false
    private let respond: @Sendable (String, String) -> String?

    init(respond: @escaping @Sendable (String, String) -> String?) throws {
        self.respond = respond
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = 0
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, len) == 0 && getsockname(listener, $0, &len) == 0 }
        }
        guard bound, listen(listener, 16) == 0 else { throw CocoaError(.fileWriteUnknown) }
        port = UInt16(bigEndian: addr.sin_port)
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    var seen: [(path: String, body: String)] {
        lock.lock()
        defer { lock.unlock() }
        return requests
    }

    var endpoint: String { "http://127.0.0.1:\(port)" }

    func stop() {
        lock.lock()
        // Once only: by a second call serve() may have closed the listener, and its number
        // may be another test's listener by then, which this shutdown would end.
        guard !stopped else { return lock.unlock() }
        stopped = true
        for fd in held { close(fd) }
        held = []
        lock.unlock()
        // Only shut down: accept then fails and serve() closes the descriptor itself, so
        // its number cannot be reused by another test's socket while serve() still uses it.
        shutdown(listener, Int32(SHUT_RDWR))
    }

    /// A port nothing listens on: connecting to it is refused.
    static func refusedPort() -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        return UInt16(bigEndian: addr.sin_port)
    }

    private func serve() {
        // Bounded: stop() shuts the listener down, which ends accept.
        defer { close(listener) }
        while true {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { return }
            var buffer: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            var request: (String, String)?
            for _ in 0..<100 where request == nil {
                let n = recv(fd, &chunk, chunk.count, 0)
                guard n > 0 else { break }
                buffer += chunk[0..<n]
                request = Self.parse(buffer)
            }
            guard let (path, body) = request else { close(fd); continue }
            lock.lock()
            requests.append((path, body))
            let isStopped = stopped
            lock.unlock()
            if !isStopped, let answer = respond(path, body) {
                let bytes = Array(answer.utf8)
                _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if answer.contains("Content-Length") { close(fd) } else { hold(fd) }
            } else {
                hold(fd)
            }
        }
    }

    private func hold(_ fd: Int32) {
        lock.lock()
        held.append(fd)
        lock.unlock()
    }

    private static func parse(_ bytes: [UInt8]) -> (String, String)? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let headEnd = text.range(of: "\r\n\r\n") else { return nil }
        let head = text[..<headEnd.lowerBound]
        let length =
            head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
        let body = text[headEnd.upperBound...]
        guard body.utf8.count >= length else { return nil }
        let path = head.split(separator: " ").dropFirst().first.map(String.init) ?? ""
        return (path, String(body))
    }

    /// A complete JSON answer.
    static func json(_ body: String, status: String = "200 OK") -> String {
        "HTTP/1.1 \(status)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    /// The head and first chunks of a stream that stays open.
    static func stream(_ lines: [String]) -> String {
        var out = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        for line in lines {
            let data = line + "\n"
            out += String(data.utf8.count, radix: 16) + "\r\n" + data + "\r\n"
        }
        return out
    }
}
