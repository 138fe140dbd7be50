import ArbiterIO
import Dispatch
import Synchronization

/// An `EventLoop` with the smallest policy there is, for testing the IO layer without
/// the server's: it records what its hooks were told, answers every read with the same
/// bytes upper-cased (or with `reply`, when set), and makes a plain `Channel` for each
/// accepted socket.
final class RecordingLoop: EventLoop, @unchecked Sendable {
    struct Record {
        var received: [UInt8] = []
        /// Hook calls in order: "received", "batchEnded", "wrote", "closing", "closed:<reason>", ...
        var calls: [String] = []
        var accepted: [Channel] = []
        var troubles: [LoopTrouble] = []
    }

    let record = Mutex(Record())
    /// Signalled once per `closed`.
    let closedSignal = DispatchSemaphore(value: 0)
    let budget: OutputBudget
    let outboundLimit: Int
    /// What to answer a read with instead of its bytes upper-cased; on `queue`.
    var reply: (([UInt8]) -> [UInt8])?
    /// Whether the answer is the channel's last output (it closes once written).
    var replyIsLast = false
    /// The epoch whose output may still be written (`outputStands`), as a cluster node's
    /// lease: output marked with another one is dropped at its write.
    let currentEpoch = Atomic<UInt64>(1)

    init(outboundLimit: Int = 1 << 20, budget: OutputBudget = OutputBudget(limit: 1 << 30)) throws {
        self.budget = budget
        self.outboundLimit = outboundLimit
        try super.init(index: 0, label: "test.loop", sendBufferBytes: nil)
    }

    func channel(fd: Int32, sink: EmbeddedSink? = nil) -> Channel {
        Channel(fd: fd, generation: 1, loop: self, outboundLimit: outboundLimit, budget: budget, sink: sink)
    }

    /// Appends `bytes` to `channel` as the server does: under its lock, bounded.
    func append(_ bytes: [UInt8], to channel: Channel, last: Bool, epoch: UInt64 = 0, flush: inout FlushList) -> Channel.AppendOutcome {
        let outcome = channel.withLock { () -> Channel.AppendOutcome in
            guard channel.acceptsAppend else { return last ? channel.sealed(after: .dropped) : .dropped }
            if epoch != 0 { channel.markOutputEpoch(epoch) }
            channel.output.bytes.append(contentsOf: bytes)
            return last ? channel.sealed(after: channel.appended()) : channel.appended()
        }
        if case .needsFlush = outcome { flush.enlist(channel) }
        return outcome
    }

    override func accepted(fd: Int32, peer: String) {
        let channel = channel(fd: fd)
        record.withLock { $0.accepted.append(channel) }
        register(channel)
    }

    override func received(_ bytes: UnsafeBufferPointer<UInt8>, on channel: Channel, flush: inout FlushList) {
        let input = Array(bytes)
        record.withLock {
            $0.received += input
            $0.calls.append("received")
        }
        let answer = reply?(input) ?? input.map { $0 >= 0x61 && $0 <= 0x7A ? $0 - 0x20 : $0 }
        _ = append(answer, to: channel, last: replyIsLast, flush: &flush)
    }

    override func batchEnded(flush: inout FlushList) {
        record.withLock { r in
            if r.calls.last != "batchEnded" { r.calls.append("batchEnded") }
        }
    }

    override func wrote(_ channel: Channel) {
        record.withLock { $0.calls.append("wrote") }
    }

    override func closing(_ channel: Channel) -> Bool {
        record.withLock { $0.calls.append("closing") }
        return true
    }

    override func closed(_ channel: Channel, reason: String) {
        record.withLock { $0.calls.append("closed:\(reason)") }
        closedSignal.signal()
    }

    override func outputStands(epoch: UInt64, markedAtMs: Int64) -> Bool {
        epoch == currentEpoch.load(ordering: .acquiring)
    }

    override func trouble(_ event: LoopTrouble) {
        record.withLock { $0.troubles.append(event) }
    }
}
