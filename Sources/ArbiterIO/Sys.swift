import CSystem
import Glibc

/// The system calls the server and the load generator make, wrapped once: EINTR is
/// retried here, EAGAIN becomes `.wouldBlock`, and every other failure carries its errno.
/// The small calls are `@inlinable`: the press path reaches them from other modules, and
/// a call across the boundary would cost instructions on every request.
public enum Sys {
    public enum IOResult: Equatable, Sendable {
        case bytes(Int)
        case wouldBlock
        case eof
        case failed(Int32)
    }

    /// A failed system call, said the way a user reads it.
    public struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        public var call: String
        public var errno: Int32

        public init(call: String, errno: Int32) {
            self.call = call
            self.errno = errno
        }

        /// What went wrong, without the call (`Connection refused`).
        public var reason: String { String(cString: strerror(errno)) }

        public var description: String { "\(call): \(reason)" }
    }

    @inlinable
    public static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        while true {
            let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if n > 0 { return .bytes(n) }
            if n == 0 { return .eof }
            let e = errno
            if e == EINTR { continue }
            if e == EAGAIN || e == EWOULDBLOCK { return .wouldBlock }
            return .failed(e)
        }
    }

    @inlinable
    public static func write(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> IOResult {
        while true {
            // MSG_NOSIGNAL: a peer that vanished must not kill the process with SIGPIPE.
            let n = Glibc.send(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
            if n >= 0 { return .bytes(n) }
            let e = errno
            if e == EINTR { continue }
            if e == EAGAIN || e == EWOULDBLOCK { return .wouldBlock }
            return .failed(e)
        }
    }

    /// Writes all of `bytes` to a blocking descriptor (a file), retrying short writes and
    /// EINTR; returns 0, or the errno that stopped it.
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Int32 {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                offset += n
            } else if n < 0, errno == EINTR {
                continue
            } else {
                return n < 0 ? errno : EIO
            }
        }
        return 0
    }

    /// Whether bytes are waiting to be read, without taking them.
    @inlinable
    public static func hasPendingBytes(_ fd: Int32) -> Bool {
        var byte: UInt8 = 0
        return Glibc.recv(fd, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT)) > 0
    }

    @inlinable
    public static func close(_ fd: Int32) {
        // Never retried: on Linux the descriptor is gone even when close reports EINTR.
        _ = Glibc.close(fd)
    }

    @inlinable
    public static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) {
        var v = value
        _ = setsockopt(fd, level, name, &v, socklen_t(MemoryLayout<Int32>.size))
    }

    /// A non-blocking listening socket on an IPv4 or IPv6 address; returns it with the
    /// port actually bound. `::` also takes IPv4 connections (dual stack).
    public static func listen(host: String, port: UInt16, backlog: Int32) throws(Failure) -> (fd: Int32, port: UInt16) {
        let host = host == "localhost" ? "127.0.0.1" : host
        let v6 = host.contains(":")
        var addr4 = sockaddr_in()
        var addr6 = sockaddr_in6()
        if v6 {
            addr6.sin6_family = sa_family_t(AF_INET6)
            addr6.sin6_port = port.bigEndian
            guard inet_pton(AF_INET6, host, &addr6.sin6_addr) == 1 else { throw Failure(call: "inet_pton(\(host))", errno: EINVAL) }
        } else {
            addr4.sin_family = sa_family_t(AF_INET)
            addr4.sin_port = port.bigEndian
            guard inet_pton(AF_INET, host, &addr4.sin_addr) == 1 else { throw Failure(call: "inet_pton(\(host))", errno: EINVAL) }
        }
        let fd = socket(v6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(call: "socket", errno: errno) }
        setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1)
        // Explicit, not the net.ipv6.bindv6only default: `::` serves IPv4 peers too.
        if v6 { setOption(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 0) }
        let bound =
            v6
            ? withUnsafePointer(to: &addr6) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
            : withUnsafePointer(to: &addr4) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        guard bound == 0 else {
            let e = errno
            Glibc.close(fd)
            throw Failure(call: v6 ? "bind([\(host)]:\(port))" : "bind(\(host):\(port))", errno: e)
        }
        guard Glibc.listen(fd, backlog) == 0 else {
            let e = errno
            Glibc.close(fd)
            throw Failure(call: "listen", errno: e)
        }
        // The port sits at the same offset in both address layouts.
        var actual = sockaddr_in6()
        var len = socklen_t(MemoryLayout<sockaddr_in6>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        return (fd, UInt16(bigEndian: actual.sin6_port))
    }

    public enum AcceptResult: Sendable {
        case accepted(fd: Int32, peer: String)
        case wouldBlock
        case failed(Int32)
    }

    public static func accept(_ listener: Int32) -> AcceptResult {
        var peer = [CChar](repeating: 0, count: 64)
        let fd = cs_accept(listener, &peer, Int32(peer.count))
        if fd >= 0 {
            setOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
            return .accepted(fd: fd, peer: peer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        }
        if -fd == EAGAIN || -fd == EWOULDBLOCK { return .wouldBlock }
        return .failed(-fd)
    }

    // MARK: epoll

    public static func epollCreate() throws(Failure) -> Int32 {
        let fd = cs_epoll_create()
        guard fd >= 0 else { throw Failure(call: "epoll_create1", errno: -fd) }
        return fd
    }
}

extension Sys {
    /// The kernel's cap on a listen backlog (`net.core.somaxconn`); 4096 if unreadable,
    /// the Linux default since 5.4.
    public static func systemMaxBacklog() -> Int {
        guard let text = readSmallFile("/proc/sys/net/core/somaxconn", limit: 32) else { return 4096 }
        let digits = text.prefix { $0 >= 0x30 && $0 <= 0x39 }
        guard let value = Int(String(decoding: digits, as: UTF8.self)), value > 0 else { return 4096 }
        return min(value, Int(Int32.max))
    }

    /// What the machine answers to on a network: its interface addresses and its host
    /// name (also as `<name>.local`, the name mDNS gives it on a LAN).
    public static func machineNames() -> [String] {
        var names: [String] = []
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        let n = cs_interface_addresses(&buffer, Int32(buffer.count))
        if n > 0 {
            let text = String(decoding: buffer[..<Int(n)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            names += text.split(separator: "\n").map(String.init)
        }
        var host = [CChar](repeating: 0, count: 256)
        if gethostname(&host, host.count - 1) == 0 {
            let name = host.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            if !name.isEmpty {
                names.append(name)
                if !name.contains(".") { names.append(name + ".local") }
            }
        }
        return names
    }
}

extension Sys {
    /// Starts a non-blocking connect to an address literal (`[v6]` and `localhost`
    /// allowed); the fd becomes writable when it is done.
    public static func connect(host: String, port: UInt16) -> Result<Int32, Failure> {
        let fd = cs_connect(HostLiteral(host)?.address ?? host, port)
        return fd >= 0 ? .success(fd) : .failure(Failure(call: "connect \(HostLiteral.authority(host, port: port))", errno: -fd))
    }

    /// The outcome of a non-blocking connect: 0 once connected, else its errno.
    public static func pendingError(_ fd: Int32) -> Int32 {
        cs_socket_error(fd)
    }
}
