/// The channels output was appended to during one batch, written once at its end:
/// coalescing a batch's replies and events into one write per channel. What is appended
/// (and what a refused append means) is the owner's; ArbiterServer adds `append(to:)`.
public struct FlushList {
    @usableFromInline var channels: [Channel] = []
    /// The lease epoch output appended through this list is made under (cluster mode;
    /// 0: none): it marks the channels (`Channel.leaseEpoch`), so a write after the
    /// lease lapsed drops it instead.
    public var leaseEpoch: UInt64 = 0
    /// With `leaseEpoch`: when output with a time limit was made (monotonic ms; 0: none).
    public var leaseStampMs: Int64 = 0

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
            channel.loop.requestClose(
                channel, reason: "output made before this node's lease lapsed (a pause or a stall) was dropped unsent: the client reconnects to the truth")
        }
    }

    package mutating func flushAll() {
        // A list lives on across a reactor's batches: what the next one appends is
        // marked by whoever makes it, not by this batch's decisions.
        leaseEpoch = 0
        leaseStampMs = 0
        guard !channels.isEmpty else { return }
        let batch = channels
        channels.removeAll(keepingCapacity: true)
        for channel in batch {
            handle(channel.flush(), of: channel)
        }
    }
}
