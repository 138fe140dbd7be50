/// The channels output was appended to during one batch, written once at its end:
/// coalescing a batch's replies and events into one write per channel. What is appended
/// (and what a refused append means) is the owner's; ArbiterServer adds `append(to:)`.
public struct FlushList {
    @usableFromInline var channels: [Channel] = []
    /// The epoch output appended through this list is made under (0: unconditional): it
    /// marks the channels (`Channel.outputEpoch`), so a write after the loop stopped
    /// standing by that epoch (`EventLoop.outputStands`) drops it instead.
    public var outputEpoch: UInt64 = 0
    /// With `outputEpoch`: when output with a time limit was made (monotonic ms; 0: none).
    public var outputStampMs: Int64 = 0

    package init() {}

    /// Remembers to flush `channel` at the end of the batch (its append said `needsFlush`).
    @inlinable public mutating func enlist(_ channel: Channel) {
        channels.append(channel)
    }

    /// `enlist`, unless it is on the list already (an append over the budget).
    package mutating func enlistOnce(_ channel: Channel) {
        if !channels.contains(where: { $0 === channel }) { channels.append(channel) }
    }

    /// Closes the channel a write found finished or failed.
    package mutating func handle(_ outcome: Channel.FlushOutcome, of channel: Channel) {
        switch outcome {
        case .done: break
        case .closeNow: channel.loop.requestClose(channel, reason: "closed after reply")
        case .failed: channel.loop.requestClose(channel, reason: "write failed")
        case .stale:
            channel.loop.requestClose(channel, reason: channel.loop.staleOutputReason)
        }
    }

    /// Inlined where the loop calls it, after every batch: most find the list empty.
    @inline(__always) package mutating func flushAll() {
        // A list lives on across a reactor's batches: what the next one appends is
        // marked by whoever makes it, not by this batch's decisions.
        outputEpoch = 0
        outputStampMs = 0
        if !channels.isEmpty { flushListed() }
    }

    private mutating func flushListed() {
        let batch = channels
        channels.removeAll(keepingCapacity: true)
        for channel in batch {
            handle(channel.flush(), of: channel)
        }
    }
}
