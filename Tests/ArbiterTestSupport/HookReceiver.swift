import ArbiterIO
import Dispatch
import Foundation
import Glibc

/// A webhook receiver on 127.0.0.1 for tests: records every request and answers as told,
/// honestly or as a hostile one would.
public final class HookReceiver: @unchecked Sendable {
    public enum Behavior: Sendable {
        case status(Int)
        /// Reads the request and never answers (until the receiver closes).
        case silent
        /// A byte of a valid status line a second.
        case trickle
        /// Bytes without a line end, as fast as they are taken, up to 1 GiB.
        case flood
        /// Answers each request on a connection with `code` and `body`, keeping it open.
        case keepAlive(Int, body: String = "")
        /// Answers a connection's first request as `keepAlive` would, then reads its
        /// next one and closes without an answer: a server that timed the idle
        /// connection out just as the request came.
        case keepAliveThenDrop(Int)
        /// Answers without `Connection: close`, then closes: the close says it.
        case answerThenClose(Int)
    }

    public struct Received: Sendable {
        public var target: String
        public var headers: [String: String]
        public var body: [UInt8]
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    struct State {
        var behavior: Behavior
        var received: [Received] = []
        var listener: Int32 = -1
        var closed = false
        var down = false
        var accepted = 0
    }

    public private(set) var port: UInt16 = 0
    private let state: Locked<State>
    private let arrived = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)

    public init(_ behavior: Behavior = .status(200)) throws {
        state = Locked(State(behavior: behavior))
        try listen(port: 0)
    }

    public var behavior: Behavior {
        get { state.withLock { $0.behavior } }
        set { state.withLock { $0.behavior = newValue } }
    }

    public var received: [Received] { state.withLock { $0.received } }

    /// Connections accepted and served (not reset while paused).
    public var accepted: Int { state.withLock { $0.accepted } }

    /// Waits (on arrivals, not by polling) until `count` requests came, or `timeout` s.
    @discardableResult
    public func wait(for count: Int, timeout: Double = 10) -> [Received] {
        let end = DispatchTime.now() + timeout
        while received.count < count {
            guard arrived.wait(timeout: end) == .success else { break }
        }
        return received
    }

    /// Down until `resume`: every connection is reset as soon as it is accepted. The port
    /// stays bound, so no other test's server can take it meanwhile.
    public func pause() { state.withLock { $0.down = true } }

    public func resume() { state.withLock { $0.down = false } }

    /// Stops listening at once; the accept loop closes the descriptor itself as it ends.
    /// Closed here, its number could be handed to another test's listener while the loop
    /// still polls it, and the loop would take that test's connections as its own.
    public func close() {
        let listener = state.withLock { s in
            defer {
                s.listener = -1
                s.closed = true
            }
            return s.listener
        }
        if listener >= 0 { shutdown(listener, Int32(SHUT_RDWR)) }
        for _ in 0..<64 { released.signal() }
    }

    deinit { close() }

    private func listen(port: UInt16) throws {
        let (fd, bound) = try Sys.listen(host: "127.0.0.1", port: port, backlog: 64)
        self.port = bound
        state.withLock { $0.listener = fd }
        let thread = DispatchQueue(label: "hook-receiver.accept")
        thread.async { self.acceptLoop(fd) }
    }

    private func acceptLoop(_ listener: Int32) {
        defer { Glibc.close(listener) }
        // Ends when the receiver is closed.
        while state.withLock({ $0.listener == listener }) {
            var p = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 50) > 0 else { continue }
            guard case .accepted(let fd, _) = Sys.accept(listener) else { continue }
            if state.withLock({ $0.down }) {
                var reset = linger(l_onoff: 1, l_linger: 0)
                setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, socklen_t(MemoryLayout<linger>.size))
                Glibc.close(fd)
                continue
            }
            state.withLock { $0.accepted += 1 }
            // A thread of its own: a silent or trickling answer blocks it for seconds, and
            // blocked Dispatch threads delay every other test's work in the process.
            Thread { self.serve(fd) }.start()
        }
    }

    private func serve(_ fd: Int32) {
        defer { Glibc.close(fd) }
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var bytes: [UInt8] = []
        // Bounded: a connection carries at most 10,000 requests, each read within 5 s.
        for served in 0..<10_000 {
            guard let (request, used) = read(fd, &bytes) else { return }
            bytes.removeFirst(used)
            let behavior = state.withLock { s -> Behavior in
                s.received.append(request)
                return s.behavior
            }
            arrived.signal()
            guard answer(fd, behavior, served: served) else { return }
        }
    }

    /// The next whole request and the bytes it took, or nil once the peer is gone.
    private func read(_ fd: Int32, _ bytes: inout [UInt8]) -> (Received, Int)? {
        var chunk = [UInt8](repeating: 0, count: 4096)
        // Bounded: each read adds bytes or ends the loop, and requests are small.
        while bytes.count < 1 << 20 {
            if let parsed = Self.parse(bytes) { return parsed }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { return nil }
            bytes += chunk[..<n]
        }
        return nil
    }

    /// Answers as `behavior` says; true if the connection carries on.
    private func answer(_ fd: Int32, _ behavior: Behavior, served: Int) -> Bool {
        switch behavior {
        case .status(let code):
            _ = put(fd, Array("HTTP/1.1 \(code) X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))
        case .keepAlive(let code, let body):
            return put(fd, Array("HTTP/1.1 \(code) X\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8))
        case .answerThenClose(let code):
            _ = put(fd, Array("HTTP/1.1 \(code) X\r\nContent-Length: 0\r\n\r\n".utf8))
        case .keepAliveThenDrop(let code):
            return served == 0 && put(fd, Array("HTTP/1.1 \(code) X\r\nContent-Length: 0\r\n\r\n".utf8))
        case .silent:
            _ = released.wait(timeout: .now() + 30)
        case .trickle:
            for byte in "HTTP/1.1 200 OK\r\n\r\n".utf8 {
                guard put(fd, [byte]), released.wait(timeout: .now() + 1) == .timedOut else { return false }
            }
        case .flood:
            let block = [UInt8](repeating: UInt8(ascii: "x"), count: 65_536)
            for _ in 0..<16_384 { guard put(fd, block) else { break } }
        }
        return false
    }

    /// Writes all of `bytes`; false once the peer is gone (no SIGPIPE).
    private func put(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }

    /// The first whole request in `bytes`, and how many bytes it took.
    static func parse(_ bytes: [UInt8]) -> (Received, Int)? {
        let separator = Array("\r\n\r\n".utf8)
        guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else { return nil }
        let head = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        guard bytes.count - (end + 4) >= length else { return nil }
        let target = head.first?.split(separator: " ").dropFirst().first.map(String.init) ?? ""
        return (Received(target: target, headers: headers, body: Array(bytes[(end + 4)..<(end + 4 + length)])), end + 4 + length)
    }
}
