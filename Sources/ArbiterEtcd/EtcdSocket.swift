import ArbiterIO

#if canImport(Glibc)
    import Glibc
#endif

/// One TCP connection to an etcd member, every operation bounded by a deadline on the
/// monotonic clock. Non-blocking underneath: `poll` does the waiting.
final class EtcdSocket {
    enum Failure: Error {
        /// Nothing was sent: the next endpoint may be tried.
        case connect(String)
        /// The request may have been sent: only the caller knows whether to retry.
        case io(String)
        case timeout
    }

    private var fd: Int32

    private init(fd: Int32) {
        self.fd = fd
    }

    deinit { close() }

    func close() {
        if fd >= 0 {
            Glibc.close(fd)
            fd = -1
        }
    }

    static func connect(to endpoint: EtcdEndpoint, deadline: Int64) throws(Failure) -> EtcdSocket {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(endpoint.host, String(endpoint.port), &hints, &list)
        guard rc == 0, let first = list else { throw .connect("cannot resolve \(endpoint.host): \(String(cString: gai_strerror(rc)))") }
        defer { freeaddrinfo(list) }
        var why = "no address"
        var info: UnsafeMutablePointer<addrinfo>? = first
        while let ai = info {
            info = ai.pointee.ai_next
            let fd = socket(ai.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { why = "socket: errno \(errno)"; continue }
            let socket = EtcdSocket(fd: fd)
            if Glibc.connect(fd, ai.pointee.ai_addr, ai.pointee.ai_addrlen) != 0 {
                guard errno == EINPROGRESS else { why = "connect: \(String(cString: strerror(errno)))"; continue }
                do {
                    try socket.wait(for: Int16(POLLOUT), deadline: deadline)
                } catch {
                    why = "connect timed out"
                    continue
                }
                var err: Int32 = 0
                var len = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len)
                guard err == 0 else { why = "connect: \(String(cString: strerror(err)))"; continue }
            }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            return socket
        }
        throw .connect("\(endpoint): \(why)")
    }

    func send(_ bytes: [UInt8], deadline: Int64) throws(Failure) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                offset += n
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                try wait(for: Int16(POLLOUT), deadline: deadline)
            } else {
                throw .io("send: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Some bytes, or an empty array at end of stream.
    func receive(deadline: Int64) throws(Failure) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n >= 0 { return Array(buffer[0..<n]) }
            guard errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else {
                throw .io("recv: \(String(cString: strerror(errno)))")
            }
            try wait(for: Int16(POLLIN), deadline: deadline)
        }
    }

    private func wait(for events: Int16, deadline: Int64) throws(Failure) {
        while true {
            let left = deadline - SystemClock.monotonic.milliseconds()
            guard left > 0 else { throw .timeout }
            var pfd = pollfd(fd: fd, events: events, revents: 0)
            let rc = poll(&pfd, 1, Int32(min(left, Int64(Int32.max))))
            if rc > 0 { return }
            if rc < 0 && errno != EINTR { throw .io("poll: \(String(cString: strerror(errno)))") }
        }
    }
}
