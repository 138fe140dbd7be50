import ArbiterLock
import Foundation

#if canImport(Glibc)
    import Glibc
    private let streamSocket = Int32(SOCK_STREAM.rawValue)
    private let sendFlags = Int32(MSG_NOSIGNAL)
    private func systemClose(_ fd: Int32) { _ = Glibc.close(fd) }
    private func systemShutdown(_ fd: Int32) { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
#elseif canImport(Musl)
    import Musl
    private let streamSocket = Int32(SOCK_STREAM)
    private let sendFlags = Int32(MSG_NOSIGNAL)
    private func systemClose(_ fd: Int32) { _ = Musl.close(fd) }
    private func systemShutdown(_ fd: Int32) { _ = Musl.shutdown(fd, Int32(SHUT_RDWR)) }
#elseif canImport(Darwin)
    import Darwin
    private let streamSocket = SOCK_STREAM
    // Darwin has no MSG_NOSIGNAL; SO_NOSIGPIPE on the socket does the same.
    private let sendFlags: Int32 = 0
    private func systemClose(_ fd: Int32) { _ = Darwin.close(fd) }
    private func systemShutdown(_ fd: Int32) { _ = Darwin.shutdown(fd, SHUT_RDWR) }
#endif

/// One TCP connection to a server: blocking POSIX sockets, a reader thread that hands
/// every line to `ClientCore`, and an outbox written in the order commands were queued.
/// Lines are queued under the core's lock and written after it is released, so that a
/// slow socket never holds the lock, yet two tasks' commands keep their order.
final class Link: @unchecked Sendable {
    let id: Int
    let host: HostAddress
    private let fd: Int32
    /// Held while writing, and by the reader while it closes the descriptor, so that a
    /// write never goes to a descriptor number the kernel gave to someone else.
    private let writing = Locked(OwnerState())
    private let io = Locked(IOState())

    private struct IOState {
        var outbox: [(id: String?, bytes: [UInt8])] = []
        var closed = false
        /// Why this side hung up, which the reader reports instead of the end of stream.
        var hungUp: String?
    }

    /// Lines longer than this are no server's: the link is dropped rather than buffer more.
    static let maxLine = 1 << 20

    private init(id: Int, host: HostAddress, fd: Int32) {
        self.id = id
        self.host = host
        self.fd = fd
    }

    /// Connects, blocking at most `timeout` seconds per address the name resolves to.
    static func open(id: Int, host: HostAddress, timeout: Double) throws -> Link {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = streamSocket
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host.host, String(host.port), &hints, &list)
        guard status == 0, let first = list else {
            throw ArbiterClientError.unreachable("\(host): cannot resolve (\(String(cString: gai_strerror(status))))")
        }
        defer { freeaddrinfo(first) }
        var failure = "no address"
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let entry = next {
            next = entry.pointee.ai_next
            let fd = socket(entry.pointee.ai_family, entry.pointee.ai_socktype, entry.pointee.ai_protocol)
            guard fd >= 0 else {
                failure = String(cString: strerror(errno))
                continue
            }
            if let error = connect(fd, entry.pointee.ai_addr, entry.pointee.ai_addrlen, timeout: timeout) {
                failure = error
                systemClose(fd)
                continue
            }
            configure(fd)
            return Link(id: id, host: host, fd: fd)
        }
        throw ArbiterClientError.unreachable("\(host): \(failure)")
    }

    /// A non-blocking connect bounded by `timeout`; nil on success, else why not.
    private static func connect(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t, timeout: Double) -> String? {
        let flags = fcntl(fd, F_GETFL, 0)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        defer { _ = fcntl(fd, F_SETFL, flags) }
        #if canImport(Darwin)
            let started = Darwin.connect(fd, address, length)
        #elseif canImport(Musl)
            let started = Musl.connect(fd, address, length)
        #else
            let started = Glibc.connect(fd, address, length)
        #endif
        if started == 0 { return nil }
        guard errno == EINPROGRESS else { return String(cString: strerror(errno)) }
        var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        let ready = poll(&poller, 1, Int32(max(1, timeout * 1000)))
        guard ready > 0 else { return ready == 0 ? "connect timed out after \(timeout) s" : String(cString: strerror(errno)) }
        var error: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size)
        return error == 0 ? nil : String(cString: strerror(error))
    }

    private static func configure(_ fd: Int32) {
        var on: Int32 = 1
        // A press is one small line: Nagle's delay would hold it behind the previous one.
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
            _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
        // A peer that stops reading fails a write after 2 s instead of blocking it for good.
        var limit = timeval(tv_sec: 2, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Starts the reader thread: each line to `line`, then `end` once, with why.
    func start(line: @escaping @Sendable (String) -> Void, end: @escaping @Sendable (String) -> Void) {
        let thread = Thread { [self] in
            let read = self.readLines(line)
            let reason = self.io.withLock { $0.hungUp } ?? read
            self.writing.withLock { _ in
                self.io.withLock { $0.closed = true }
                systemClose(self.fd)
            }
            end(reason)
        }
        thread.name = "arbiter-client-\(host)"
        thread.start()
    }

    private func readLines(_ deliver: (String) -> Void) -> String {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { return "the server closed the connection" }
            if count < 0 {
                if errno == EINTR { continue }
                return String(cString: strerror(errno))
            }
            buffer.append(contentsOf: chunk[..<count])
            var start = 0
            while let newline = buffer[start...].firstIndex(of: 0x0A) {
                var end = newline
                if end > start, buffer[end - 1] == 0x0D { end -= 1 }
                deliver(String(decoding: buffer[start..<end], as: UTF8.self))
                start = newline + 1
            }
            buffer.removeFirst(start)
            if buffer.count > Self.maxLine { return "a line longer than \(Self.maxLine) bytes" }
        }
    }

    /// Queues a line; `flush` writes it. `id` names the command, for `takeUnsent`.
    func enqueue(_ line: String, id: String?) {
        io.withLock { $0.outbox.append((id, Array((line + "\n").utf8))) }
    }

    /// Writes everything queued, in order. A failed write hangs up: the reader then
    /// ends the link and its commands fail.
    func flush() {
        writing.withLock { _ in writeQueued() }
    }

    /// `flush` under the writing lock.
    private func writeQueued() {
        while true {
            let batch: [(id: String?, bytes: [UInt8])]? = io.withLock { state in
                guard !state.closed, !state.outbox.isEmpty else { return nil }
                defer { state.outbox = [] }
                return state.outbox
            }
            guard let batch else { return }
            let bytes = batch.flatMap(\.bytes)
            var sent = 0
            while sent < bytes.count {
                let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, sendFlags) }
                if n > 0 {
                    sent += n
                } else if n < 0, errno == EINTR {
                    continue
                } else {
                    hangUp(String(cString: strerror(errno)))
                    return
                }
            }
        }
    }

    /// The ids of commands still queued, never written: they may go out on the next link.
    func takeUnsent() -> Set<String> {
        io.withLock { state in
            defer { state.outbox = [] }
            return Set(state.outbox.compactMap(\.id))
        }
    }

    /// Ends the connection: the reader wakes, closes, and reports the end with `reason`.
    func hangUp(_ reason: String = "closed by the client") {
        io.withLock { state in
            if state.hungUp == nil { state.hungUp = reason }
            if !state.closed { systemShutdown(fd) }
        }
    }
}
