import CSystem

/// A non-blocking socket's unsent bytes, and whether it waits for EPOLLOUT.
///
/// The socket half of a connection's output, kept apart from what the bytes mean (the
/// server appends lines, frames and replies into `bytes`). Not synchronized: the owner
/// keeps it under the channel's lock, so two threads never race to set different
/// epoll masks. Inlinable: every reply's flush runs through it from ArbiterServer.
public struct OutputBuffer {
    /// Unsent output; `start` bytes of it are already written.
    public var bytes: [UInt8] = []
    public var start = 0
    /// Output is waiting for EPOLLOUT.
    public var waitingWritable = false

    public enum WriteResult: Equatable {
        /// Everything is written.
        case drained
        /// The socket is full; EPOLLOUT is asked for and the rest waits for it.
        case blocked
        /// The socket failed or the peer is gone.
        case failed
    }

    @inlinable public init() {}

    @inlinable public var pending: Int { bytes.count - start }

    /// Drops everything unsent (the peer is gone or was cut off).
    @inlinable public mutating func discard() {
        bytes = []
        start = 0
    }

    /// Marks everything as written without a socket (the embedded test seam took it).
    @inlinable public mutating func consumeAll() {
        start = bytes.count
    }

    /// Writes pending bytes without blocking. On EAGAIN asks `epfd` for EPOLLOUT
    /// (registered with `data`) and leaves the rest for `EPOLLOUT`.
    @inlinable public mutating func write(fd: Int32, epfd: Int32, data: UInt64) -> WriteResult {
        while pending > 0 {
            let result = bytes.withUnsafeBytes { raw in
                Sys.write(fd, UnsafeRawBufferPointer(rebasing: raw[start...]))
            }
            switch result {
            case .bytes(let n):
                start += n
            case .wouldBlock:
                waitingWritable = true
                updateInterest(fd: fd, epfd: epfd, data: data)
                return .blocked
            case .eof, .failed:
                return .failed
            }
        }
        // Keep a small buffer for the next reply; give a big one back, so 10,000 quiet
        // connections cost little.
        bytes.removeAll(keepingCapacity: bytes.capacity <= 4096)
        start = 0
        return .drained
    }

    /// Sets the epoll mask from `waitingWritable`.
    @inlinable public func updateInterest(fd: Int32, epfd: Int32, data: UInt64) {
        var events = cs_EPOLLRDHUP | cs_EPOLLIN
        if waitingWritable { events |= cs_EPOLLOUT }
        _ = cs_epoll_ctl(epfd, cs_EPOLL_CTL_MOD, fd, events, data)
    }
}
