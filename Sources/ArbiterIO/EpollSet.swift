import CSystem
import Glibc

/// One epoll descriptor, the memory its waits fill and the buffer reads land in.
///
/// The system-call half of a reactor: which sockets are ready, and their bytes. What the
/// bytes mean, and which connection a registration's `data` names, is the owner's. Not
/// synchronized: one serial queue owns it (only `fd`, for `epoll_ctl`, is shared).
package final class EpollSet: @unchecked Sendable {
    /// Registrations `wait` reports at most at once.
    package static let batch: Int32 = 256
    package let fd: Int32
    @usableFromInline let readyEvents: UnsafeMutablePointer<UInt32>
    @usableFromInline let readyData: UnsafeMutablePointer<UInt64>
    /// Where every read lands; reused, so a read allocates nothing.
    @usableFromInline let scratch: UnsafeMutableRawBufferPointer

    package init(readBufferBytes: Int = 64 * 1024) throws(Sys.Failure) {
        fd = try Sys.epollCreate()
        scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: readBufferBytes, alignment: 16)
        readyEvents = .allocate(capacity: Int(EpollSet.batch))
        readyData = .allocate(capacity: Int(EpollSet.batch))
    }

    deinit {
        scratch.deallocate()
        readyEvents.deallocate()
        readyData.deallocate()
        Sys.close(fd)
    }

    /// Waits up to `timeoutMs` (0: just look) for ready registrations; how many there
    /// are (0 on a timeout or an error), each then read with `ready(_:)`.
    @inlinable package func wait(timeoutMs: Int32) -> Int {
        Int(cs_epoll_wait(fd, readyEvents, readyData, EpollSet.batch, timeoutMs))
    }

    /// The `i`th registration of the last `wait`: its data and its epoll events.
    @inlinable package func ready(_ i: Int) -> (data: UInt64, events: UInt32) {
        (readyData[i], readyEvents[i])
    }

    /// Whether any registration is ready now, without waiting (the sweep's check for a
    /// missed wake-up). Overwrites what the last `wait` reported.
    package func hasReady() -> Bool {
        cs_epoll_wait(fd, readyEvents, readyData, 1, 0) > 0
    }

    /// Watches `socket` for `events`, reported with `data`; 0 or the errno.
    @discardableResult package func add(_ socket: Int32, events: UInt32, data: UInt64) -> Int32 {
        cs_epoll_ctl(fd, cs_EPOLL_CTL_ADD, socket, events, data)
    }

    /// Changes what `socket`, already added, is watched for; 0 or the errno.
    @discardableResult package func modify(_ socket: Int32, events: UInt32, data: UInt64) -> Int32 {
        cs_epoll_ctl(fd, cs_EPOLL_CTL_MOD, socket, events, data)
    }

    /// Stops watching `socket`.
    package func remove(_ socket: Int32) {
        _ = cs_epoll_ctl(fd, cs_EPOLL_CTL_DEL, socket, 0, 0)
    }

    package enum ReadResult {
        /// Bytes read, valid until the next read.
        case bytes(UnsafeBufferPointer<UInt8>)
        case wouldBlock
        case eof
        case failed(Int32)
    }

    /// `read`, with the kernel's receive stamp of the bytes read in `stamp` (nanoseconds on
    /// CLOCK_REALTIME; 0 when none came: `ArrivalStamp`). For sockets stamped with
    /// `cs_enable_rx_timestamps`.
    @inlinable package func receive(_ socket: Int32, stamp: inout Int64) -> ReadResult {
        let n = cs_recv_stamped(socket, scratch.baseAddress, scratch.count, &stamp)
        if n > 0 { return .bytes(UnsafeBufferPointer(start: scratch.baseAddress!.assumingMemoryBound(to: UInt8.self), count: n)) }
        if n == 0 { return .eof }
        let e = Int32(truncatingIfNeeded: -n)
        return e == EAGAIN || e == EWOULDBLOCK ? .wouldBlock : .failed(e)
    }

    /// Reads what `socket` has into the shared buffer, without blocking.
    @inlinable package func read(_ socket: Int32) -> ReadResult {
        switch Sys.read(socket, into: scratch) {
        case .bytes(let n):
            .bytes(UnsafeBufferPointer(start: scratch.baseAddress!.assumingMemoryBound(to: UInt8.self), count: n))
        case .wouldBlock: .wouldBlock
        case .eof: .eof
        case .failed(let e): .failed(e)
        }
    }
}
