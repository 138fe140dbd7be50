import Synchronization

/// The unsent output of all channels together, bounded: past the limit the peers with
/// the largest backlog are cut off first, which frees their output at once (and, in the
/// server, releases what they held, `reason=disconnect`), until the total is back under
/// 90% of the limit. Each channel counts its backlog in whole 4 KiB units
/// (`Channel.accounted`), so replies written at once never touch the total.
public final class OutputBudget: Sendable {
    public static let unit = 4096
    package let limit: Int
    private let total = Atomic<Int>(0)
    private let shedding = Atomic<Bool>(false)

    package init(limit: Int) {
        self.limit = limit
    }

    package var queuedBytes: Int { total.load(ordering: .relaxed) }

    /// Brings the channel's share in line with its backlog. Under its lock; true when the
    /// total just grew past the limit (the caller sheds once it let go of the lock).
    public func account(_ channel: Channel) -> Bool {
        let units = channel.output.pending / OutputBudget.unit * OutputBudget.unit
        guard units != channel.accounted else { return false }
        let delta = units - channel.accounted
        channel.accounted = units
        let now = total.wrappingAdd(delta, ordering: .relaxed).newValue
        return delta > 0 && now > limit
    }

    /// Cuts the largest backlogs among `channels` until the total is under 90% of the
    /// limit; `cut` is told each one cut (its output already dropped), to close it.
    /// Called without any channel's lock held; one shed at a time.
    package func shed(among channels: () -> [Channel], cut: (Channel) -> Void) {
        guard !shedding.exchange(true, ordering: .acquiring) else { return }
        defer { shedding.store(false, ordering: .releasing) }
        guard queuedBytes > limit else { return }
        var backlogs = channels().map { c in (c, c.withLock { c.gate.acceptsOutput ? c.pending : 0 }) }
        backlogs.removeAll { $0.1 == 0 }
        backlogs.sort { $0.1 > $1.1 }
        let target = limit - limit / 10
        for (channel, _) in backlogs {
            guard queuedBytes > target else { break }
            let wasCut = channel.withLock { () -> Bool in
                guard channel.gate.acceptsOutput else { return false }
                // Nothing more is written to it: its output is dropped and freed now.
                channel.shut(.discarding)
                return true
            }
            if wasCut { cut(channel) }
        }
    }
}
