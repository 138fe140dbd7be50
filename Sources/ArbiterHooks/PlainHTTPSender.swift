import ArbiterIO
import ArbiterWire
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// `http://` over sockets of our own, kept alive between attempts: a total deadline on
/// the monotonic clock for everything from the connect to the end of the answer, and
/// nothing read past its first 8 KiB. A receiver that never answers, trickles a byte a
/// second or sends a gigabyte costs one thread until the deadline and 8 KiB.
public final class PlainHTTPSender: HookSender, @unchecked Sendable {
    static let maxResponseBytes = 8192
    /// How long the rest of an answer may take once its status line is in: the outcome is
    /// known by then, and a slow tail only decides whether the connection is kept.
    static let tailNs: Int64 = 100_000_000

    let pool: IdleConnections
    let workers: HookWorkers

    /// `attempts`: a hook's attempts at a time (4), each on a thread of the sender's own,
    /// and as many connections kept between them.
    public init(attempts: Int = 4) {
        pool = IdleConnections(capacity: attempts)
        workers = HookWorkers(limit: attempts)
    }

    public func send(_ request: HookRequest, timeoutMs: Int64, done: @escaping @Sendable (HookOutcome) -> Void) {
        let deadline = SystemClock.monotonic.nanoseconds() + timeoutMs * 1_000_000
        // Blocking calls on a worker thread: the hook's queue only ever waits for `done`.
        workers.run { done(self.exchange(request, deadline: deadline)) }
    }

    func exchange(_ request: HookRequest, deadline: Int64) -> HookOutcome {
        var head = "POST \(request.url.target) HTTP/1.1\r\nHost: \(request.url.authority)\r\n"
        head += "Content-Type: application/json\r\nContent-Length: \(request.body.count)\r\nUser-Agent: arbiter\r\n"
        for (name, value) in request.headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        let bytes = Array(head.utf8) + request.body
        if let fd = pool.take(now: SystemClock.monotonic.nanoseconds()) {
            let kept = Self.attempt(fd, bytes, deadline: deadline)
            // A kept connection the receiver closed meanwhile answered nothing: the request
            // goes again on a new one (if it was read after all, `webhook-id` repeats).
            if !kept.unanswered { return finish(fd, kept) }
            Glibc.close(fd)
        }
        let fd: Int32
        switch Self.connect(host: request.url.host, port: request.url.port, deadline: deadline) {
        case .success(let socket): fd = socket
        case .failure(let why): return .failed(why.reason)
        }
        return finish(fd, Self.attempt(fd, bytes, deadline: deadline))
    }

    private func finish(_ fd: Int32, _ result: Attempt) -> HookOutcome {
        if result.reusable {
            pool.put(fd, now: SystemClock.monotonic.nanoseconds())
        } else {
            Glibc.close(fd)
        }
        return result.outcome
    }

    struct Attempt {
        var outcome: HookOutcome
        /// The whole answer was read and the receiver keeps the connection open.
        var reusable = false
        /// Nothing came back: the connection was closed or reset before an answer began.
        var unanswered = false
    }

    static func attempt(_ fd: Int32, _ bytes: [UInt8], deadline: Int64) -> Attempt {
        if let why = sendAll(fd, bytes, deadline: deadline) { return Attempt(outcome: .failed(why.reason), unanswered: why.closed) }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 2048)
        var outcome: HookOutcome?
        var until = deadline
        // Bounded: each pass reads bytes (at most 8 KiB in all) or returns.
        while true {
            if outcome == nil, let end = response.firstIndex(of: UInt8(ascii: "\n")) {
                let status = statusLine(response[..<end])
                guard case .status = status else { return Attempt(outcome: status) }
                outcome = status
                until = min(deadline, SystemClock.monotonic.nanoseconds() + tailNs)
            }
            if let outcome, let framing = HTTPAnswerFraming.complete(response) {
                return Attempt(outcome: outcome, reusable: framing == .reusable)
            }
            guard response.count < maxResponseBytes else {
                return Attempt(outcome: outcome ?? .failed("no status line in the first \(maxResponseBytes) bytes"))
            }
            guard wait(fd, Int16(POLLIN), deadline: until) else {
                return Attempt(outcome: outcome ?? .failed("timed out waiting for the answer"))
            }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, min($0.count, maxResponseBytes - response.count), 0) }
            if n > 0 {
                response += chunk[..<n]
            } else if n == 0 {
                return Attempt(outcome: outcome ?? .failed("connection closed before an answer"), unanswered: response.isEmpty)
            } else if errno != EAGAIN && errno != EINTR {
                let reset = errno == ECONNRESET
                return Attempt(outcome: outcome ?? .failed("receive: \(String(cString: strerror(errno)))"), unanswered: reset && response.isEmpty)
            }
        }
    }

    static func statusLine(_ line: ArraySlice<UInt8>) -> HookOutcome {
        let parts = line.split(separator: UInt8(ascii: " "), maxSplits: 2)
        guard parts.count >= 2, parts[0].starts(with: Array("HTTP/1.".utf8)), parts[1].count == 3,
            let code = Int(String(decoding: parts[1], as: UTF8.self))
        else { return .failed("not an HTTP answer") }
        return .status(code)
    }

    struct Refusal: Error {
        var reason: String
    }

    static func connect(host: String, port: Int, deadline: Int64) -> Result<Int32, Refusal> {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else { return .failure(Refusal(reason: "cannot resolve \(host): \(String(cString: gai_strerror(rc)))")) }
        defer { freeaddrinfo(list) }
        var why = "no address for \(host)"
        var info: UnsafeMutablePointer<addrinfo>? = first
        while let ai = info {
            info = ai.pointee.ai_next
            let fd = socket(ai.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { continue }
            if Glibc.connect(fd, ai.pointee.ai_addr, ai.pointee.ai_addrlen) != 0 {
                guard errno == EINPROGRESS else {
                    why = "connect: \(String(cString: strerror(errno)))"
                    Glibc.close(fd)
                    continue
                }
                guard wait(fd, Int16(POLLOUT), deadline: deadline) else {
                    Glibc.close(fd)
                    return .failure(Refusal(reason: "timed out connecting"))
                }
                var err: Int32 = 0
                var len = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len)
                guard err == 0 else {
                    why = "connect: \(String(cString: strerror(err)))"
                    Glibc.close(fd)
                    continue
                }
            }
            return .success(fd)
        }
        return .failure(Refusal(reason: why))
    }

    struct SendFailure {
        var reason: String
        /// The receiver had closed or reset the connection.
        var closed: Bool
    }

    static func sendAll(_ fd: Int32, _ bytes: [UInt8], deadline: Int64) -> SendFailure? {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                offset += n
            } else if n < 0 && (errno == EAGAIN || errno == EINTR) {
                guard wait(fd, Int16(POLLOUT), deadline: deadline) else { return SendFailure(reason: "timed out sending", closed: false) }
            } else {
                let closed = errno == EPIPE || errno == ECONNRESET
                return SendFailure(reason: "send: \(String(cString: strerror(errno)))", closed: closed)
            }
        }
        return nil
    }

    /// Whether `fd` became ready before the deadline.
    static func wait(_ fd: Int32, _ events: Int16, deadline: Int64) -> Bool {
        // Bounded: each pass either returns or polls for the time left, which shrinks.
        while true {
            let left = deadline - SystemClock.monotonic.nanoseconds()
            guard left > 0 else { return false }
            var p = pollfd(fd: fd, events: events, revents: 0)
            let rc = poll(&p, 1, Int32(min(left / 1_000_000 + 1, 60_000)))
            if rc > 0 { return true }
            if rc < 0 && errno != EINTR { return false }
        }
    }
}
