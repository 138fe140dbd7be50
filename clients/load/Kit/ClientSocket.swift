import CSystem
import Glibc

/// The system calls the generator makes, wrapped once: EINTR is retried, EAGAIN
/// becomes `.wouldBlock`, anything else carries its errno.
public enum ClientSocket {
    public enum IOResult: Equatable {
        case bytes(Int)
        case wouldBlock
        case eof
        case failed(Int32)
    }

    /// Starts a non-blocking connect; the fd becomes writable when it is done.
    public static func connect(host: String, port: UInt16) -> Result<Int32, ErrnoError> {
        let fd = cs_connect(HostLiteral(host)?.address ?? host, port)
        return fd >= 0 ? .success(fd) : .failure(ErrnoError(call: "connect \(HostLiteral.authority(host, port: port))", code: -fd))
    }

    /// The outcome of a non-blocking connect: 0 once connected.
    public static func pendingError(_ fd: Int32) -> Int32 {
        cs_socket_error(fd)
    }

    @inline(__always)
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

    @inline(__always)
    public static func write(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> IOResult {
        while true {
            // MSG_NOSIGNAL: a server that went away must not kill the generator.
            let n = Glibc.send(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
            if n >= 0 { return .bytes(n) }
            let e = errno
            if e == EINTR { continue }
            if e == EAGAIN || e == EWOULDBLOCK { return .wouldBlock }
            return .failed(e)
        }
    }

    public static func close(_ fd: Int32) {
        // Never retried: on Linux the descriptor is gone even when close reports EINTR.
        _ = Glibc.close(fd)
    }

    /// Raises the open-file limit as far as allowed; returns the limit in force.
    public static func raiseFileLimit(to want: Int) -> Int {
        Int(cs_raise_nofile(UInt64(want)))
    }
}
