import ArbiterIO
import ArbiterWire
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// `http://` over a socket of our own: one request per connection, a total deadline on
/// the monotonic clock for everything from the connect to the status line, and nothing
/// read past the response head's first 8 KiB. A receiver that never answers, trickles a
/// byte a second or sends a gigabyte costs one thread until the deadline and 8 KiB.
public struct PlainHTTPSender: HookSender {
    static let maxResponseBytes = 8192

    public init() {}

    public func send(_ request: HookRequest, timeoutMs: Int64, done: @escaping @Sendable (HookOutcome) -> Void) {
        let deadline = SystemClock.monotonic.nanoseconds() + timeoutMs * 1_000_000
        // Blocking calls on a worker thread: the hook's queue only ever waits for `done`.
        DispatchQueue.global().async { done(Self.exchange(request, deadline: deadline)) }
    }

    static func exchange(_ request: HookRequest, deadline: Int64) -> HookOutcome {
        var head = "POST \(request.url.target) HTTP/1.1\r\nHost: \(request.url.authority)\r\n"
        head += "Content-Type: application/json\r\nContent-Length: \(request.body.count)\r\nConnection: close\r\nUser-Agent: arbiter\r\n"
        for (name, value) in request.headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        let fd: Int32
        switch connect(host: request.url.host, port: request.url.port, deadline: deadline) {
        case .success(let socket): fd = socket
        case .failure(let why): return .failed(why.reason)
        }
        defer { Glibc.close(fd) }
        if let why = sendAll(fd, Array(head.utf8) + request.body, deadline: deadline) { return .failed(why) }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 2048)
        while response.count < maxResponseBytes {
            if let end = response.firstIndex(of: UInt8(ascii: "\n")) { return statusLine(response[..<end]) }
            guard wait(fd, Int16(POLLIN), deadline: deadline) else { return .failed("timed out waiting for the answer") }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, min($0.count, maxResponseBytes - response.count), 0) }
            if n > 0 {
                response += chunk[..<n]
            } else if n == 0 {
                return .failed("connection closed before an answer")
            } else if errno != EAGAIN && errno != EINTR {
                return .failed("receive: \(String(cString: strerror(errno)))")
            }
        }
        return .failed("no status line in the first \(maxResponseBytes) bytes")
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

    static func sendAll(_ fd: Int32, _ bytes: [UInt8], deadline: Int64) -> String? {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                offset += n
            } else if n < 0 && (errno == EAGAIN || errno == EINTR) {
                guard wait(fd, Int16(POLLOUT), deadline: deadline) else { return "timed out sending" }
            } else {
                return "send: \(String(cString: strerror(errno)))"
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
