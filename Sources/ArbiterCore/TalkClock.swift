/// The timer state of one press-to-talk.
///
/// The seed report on press-to-talk used a long-press recognizer whose "pressing"
/// callback ended at its minimum duration with the finger still down, so every talk
/// stopped itself after 0.35 s. A long press succeeds and ends at its minimum duration,
/// so it cannot see the release: here STARTED comes from the clock at `longMs`, and
/// STOPPED only from the owner's real UP (or the timeout), never from the clock that
/// started it.
struct TalkClock: Sendable, Equatable {
    let since: Instant
    let longMs: Int64
    let timeoutMs: Int64
    let minTalkMs: Int64
    /// The moment the talk started (its nominal time, `since + longMs`), once it has.
    private(set) var startedAt: Instant?

    init(since: Instant, longMs: Int64, timeoutMs: Int64, minTalkMs: Int64) {
        self.since = since
        self.longMs = max(longMs, 0)
        self.timeoutMs = timeoutMs
        self.minTalkMs = minTalkMs
    }

    var startsAt: Instant { since + longMs }

    var nextDeadline: Instant? {
        guard let startedAt else { return startsAt }
        return timeoutMs > 0 ? startedAt + timeoutMs : nil
    }

    /// Whether the talk must start at `now` (exactly once).
    mutating func startIfDue(at now: Instant) -> Bool {
        guard startedAt == nil, now >= startsAt else { return false }
        startedAt = startsAt
        return true
    }

    func timedOut(at now: Instant) -> Bool {
        guard let startedAt, timeoutMs > 0 else { return false }
        return now >= startedAt + timeoutMs
    }

    /// How long the talk lasted if it stopped at `now` (timeouts stop at their deadline).
    func heldMs(at now: Instant, timedOut: Bool) -> Int64 {
        guard let startedAt else { return 0 }
        return timedOut ? timeoutMs : max(0, now.since(startedAt))
    }

    func isDiscarded(heldMs: Int64) -> Bool { heldMs < minTalkMs }
}
