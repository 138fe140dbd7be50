import Synchronization

/// Reading a ready socket: its bytes, and when they arrived.
extension EventLoop {
    func readable(_ channel: Channel, flush: inout FlushList) {
        var stamp: Int64 = 0
        switch stampsArrivals ? epoll.receive(channel.fd, stamp: &stamp) : epoll.read(channel.fd) {
        case .bytes(let bytes):
            let real = SystemClock.monotonic.nanoseconds()
            batchStamp = batchTime(givenSystem: real)
            arrivalStamp = stampsArrivals ? arrival(stamp: stamp, readAt: real) : batchStamp
            received(bytes, on: channel, flush: &flush)
        case .wouldBlock:
            return
        case .eof:
            close(channel, reason: "eof")
        case .failed(let e):
            close(channel, reason: "errno \(e)")
        }
    }

    /// The arrival of bytes read at `readAt` (monotonic) that the kernel stamped `stamp`,
    /// on `batchStamp`'s clock; the read time where the stamp is missing or not believed.
    private func arrival(stamp: Int64, readAt: Int64) -> Int64 {
        switch ArrivalStamp.reading(kernelRealtimeNs: stamp, realtimeOffset: realtimeOffset, readMonotonicNs: readAt) {
        case .delay(let delay):
            arrivalCounts.stamped.add(1, ordering: .relaxed)
            return batchStamp &- delay
        case .none:
            arrivalCounts.unstamped.add(1, ordering: .relaxed)
            return batchStamp
        case .clockStepped:
            arrivalCounts.clockStepped.add(1, ordering: .relaxed)
            return batchStamp
        }
    }

    // MARK: Embedded (tests)

    /// One read of `bytes` on `channel`, handled as `drainReadyEvents` handles one.
    /// On `queue`.
    package final func deliverForTesting(_ bytes: [UInt8], to channel: Channel, arrivedNanosAgo: Int64 = 0) {
        assertOnQueue()
        batchStamp = batchTime(givenSystem: SystemClock.monotonic.nanoseconds())
        arrivalStamp = batchStamp - arrivedNanosAgo
        var flush = FlushList()
        bytes.withUnsafeBufferPointer { received($0, on: channel, flush: &flush) }
        batchEnded(flush: &flush)
        flush.flushAll()
        closeRequested()
    }
}
