/// Whether the journal can be written, and the episode of failure if not. Owned by the
/// journal's lock.
///
/// One failed write or sync starts an episode: presses are refused until an operation
/// of the same kind succeeds (a sync failure is only cured by a successful sync). While
/// it lasts, one press per `retryIntervalMs` is let through to try the disk again.
struct JournalHealth {
    private(set) var failure: Int32?
    /// Whether the failure was a sync: a write that succeeds does not prove a sync would.
    private var failedSync = false
    private var lastProbeMs: Int64 = .min
    private(set) var startedMs: Int64 = 0
    private(set) var refusedInEpisode = 0
    let retryIntervalMs: Int64

    init(retryIntervalMs: Int64) {
        self.retryIntervalMs = retryIntervalMs
    }

    var isHealthy: Bool { failure == nil }

    /// Whether only a sync can end the episode: a probe then syncs what it writes, even
    /// records that are not synced otherwise, or a panel with no reservation due could
    /// never end it.
    var needsSync: Bool { failure != nil && failedSync }

    /// Whether a press may try the disk at `nowMs`: always while healthy, and during an
    /// episode once per retry interval.
    mutating func admits(nowMs: Int64) -> Bool {
        guard failure != nil else { return true }
        guard nowMs &- lastProbeMs >= retryIntervalMs || lastProbeMs == .min else { return false }
        lastProbeMs = nowMs
        return true
    }

    mutating func noteRefusal() { refusedInEpisode += 1 }

    /// Records a failure; true if it starts an episode (log it).
    mutating func fail(errno e: Int32, sync: Bool, nowMs: Int64) -> Bool {
        failedSync = failedSync || sync
        lastProbeMs = nowMs
        guard failure == nil else {
            failure = e
            return false
        }
        failure = e
        startedMs = nowMs
        refusedInEpisode = 0
        return true
    }

    /// Records a success; true if it ends an episode (log it).
    mutating func succeed(synced: Bool) -> Bool {
        guard failure != nil, synced || !failedSync else { return false }
        failure = nil
        failedSync = false
        lastProbeMs = .min
        return true
    }
}
