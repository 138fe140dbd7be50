import Dispatch
import Synchronization

/// Waiting for ready sockets, reading one (its bytes, and when they arrived), and the
/// sweep for ready sockets a missed wake-up left unread.
extension EventLoop {
    /// Waits for the next batch: spun for the window of `idleSpin`, then blocked for up to
    /// `timeoutMs`; the spell adapts the window.
    @inline(__always) func idleWait(timeoutMs: Int32) -> Int {
        idleSpin.wait(
            now: { SystemClock.monotonic.nanoseconds() }, look: { epoll.wait(timeoutMs: 0) }, block: { epoll.wait(timeoutMs: timeoutMs) })
    }

    /// One read of a ready socket; false when it filled the buffer, so that bytes may be
    /// left behind it (the batch is not read through: `ReadWatermark`).
    func readable(_ channel: Channel, flush: inout FlushList) -> Bool {
        var stamp: Int64 = 0
        switch stampsArrivals ? epoll.receive(channel.fd, stamp: &stamp) : epoll.read(channel.fd) {
        case .bytes(let bytes):
            let real = SystemClock.monotonic.nanoseconds()
            batchStamp = batchTime(givenSystem: real)
            arrivalStamp = stampsArrivals ? arrival(stamp: stamp, readAt: real) : batchStamp
            received(bytes, on: channel, flush: &flush)
            return bytes.count < epoll.scratch.count
        case .wouldBlock:
            return true
        case .eof:
            close(channel, reason: "eof")
        case .failed(let e):
            close(channel, reason: "errno \(e)")
        }
        return true
    }

    /// Someone waits for this loop to read through a time (`ReadMark.kick`): the next wait
    /// only looks, so the time it publishes is after the ask, whether or not anything came.
    func tookKick(_ timeout: inout Int32) {
        readWatermark?.marks[index].tookKick()
        timeout = 0
    }

    /// The arrival of bytes read at `readAt` (monotonic) that the kernel stamped `stamp`,
    /// on `batchStamp`'s clock; the read time where the stamp is missing or not believed.
    private func arrival(stamp: Int64, readAt: Int64) -> Int64 {
        switch ArrivalStamp.reading(kernelRealtimeNs: stamp, realtimeOffset: realtimeOffset, readMonotonicNs: readAt) {
        case .delay(let delay):
            arrivalCounts.stamped.add(1, ordering: .relaxed)
            let at = batchStamp &- delay
            if let mark = readWatermark?.marks[index].readThrough, let lag = ReadWatermark.lag(of: at, behind: mark) { behindReadMark(by: lag) }
            return at
        case .none:
            arrivalCounts.unstamped.add(1, ordering: .relaxed)
            return batchStamp
        case .clockStepped:
            arrivalCounts.clockStepped.add(1, ordering: .relaxed)
            return batchStamp
        }
    }

    private func behindReadMark(by lag: Int64) {
        arrivalCounts.behindReadMark.add(1, ordering: .relaxed)
        if lag > arrivalCounts.behindReadMarkMaxNs.load(ordering: .relaxed) { arrivalCounts.behindReadMarkMaxNs.store(lag, ordering: .relaxed) }
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

    // MARK: Sweep: what a missed wake-up left unread

    /// Once a second: the safety net for missed wake-ups, then the subclass's timeouts.
    /// On `queue`.
    package final func sweep() {
        assertOnQueue()
        // Sockets ready while the source has not run for half a second, and still 50 ms
        // later (a wake-up takes microseconds), mean a wake-up was missed somewhere below
        // us. Serve them, and say so, rather than leave peers waiting for the next event.
        if isStale() {
            queue.asyncAfter(deadline: .now() + .milliseconds(50)) { [weak self] in
                guard let self, self.source != nil, self.isStale() else { return }
                self.trouble(.missedWakeup)
                self.drainReadyEvents()
            }
        }
        swept()
    }

    /// Sockets are ready but the source has not run for half a second. On `queue`.
    private func isStale() -> Bool {
        SystemClock.monotonic.nanoseconds() - drainedAt > 500_000_000 && epoll.hasReady()
    }
}
