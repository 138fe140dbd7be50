import ArbiterIO
import Dispatch
import Synchronization

/// An `EventLoop` on a clock the test sets, recording the stamp each read was handled
/// with; `onRead` runs on `queue` at every read, before it is recorded.
final class ManualClockLoop: EventLoop, @unchecked Sendable {
    struct Read {
        var fd: Int32
        var bytes: [UInt8]
        var stamp: Int64
    }

    let clock = ManualClock(nanoseconds: 0)
    let reads = Mutex<[Read]>([])
    var onRead: ((Channel) -> Void)?
    /// Signalled after each read is recorded, so a test waits on the read itself.
    let readRecorded = DispatchSemaphore(value: 0)

    init() throws {
        try super.init(index: 0, label: "test.clock-loop", sendBufferBytes: nil)
    }

    func channel(fd: Int32) -> Channel {
        Channel(fd: fd, generation: 1, loop: self, outboundLimit: 1 << 20, budget: OutputBudget(limit: 1 << 30), sink: nil)
    }

    override func batchTime(givenSystem nanoseconds: Int64) -> Int64 {
        clock.nanoseconds()
    }

    override func received(_ bytes: UnsafeBufferPointer<UInt8>, on channel: Channel, flush: inout FlushList) {
        let stamp = batchNanos
        onRead?(channel)
        reads.withLock { $0.append(Read(fd: channel.fd, bytes: Array(bytes), stamp: stamp)) }
        readRecorded.signal()
    }
}
