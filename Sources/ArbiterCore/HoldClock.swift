/// The timer state of one hold: what the ring shows and whether it fired both come
/// from here.
///
/// The seed report on the emergency button had the ring driven by one gesture and the
/// firing by another; a finger that drifted 10 pt stopped the second but not the first,
/// so a full ring sometimes fired nothing. Here there is one clock: `step(at:)` derives
/// MIDWAY, PROGRESS and completion from the same elapsed time, and completion is the
/// only way a value of 1.000 is ever produced.
struct HoldClock: Sendable, Equatable {
    let since: Instant
    let holdMs: Int64
    let progressMs: Int64
    private(set) var midwaySent = false
    /// When the next PROGRESS is due; nil when completion comes first.
    private(set) var nextProgress: Instant?

    /// What one step at a given time owes the members, in this order.
    struct Step: Equatable {
        var midway = false
        var progressPermille: Int?
        var completed = false
    }

    init(since: Instant, holdMs: Int64, progressMs: Int64) {
        self.since = since
        self.holdMs = max(holdMs, 0)
        self.progressMs = progressMs
        self.nextProgress = nil
        self.nextProgress = progressAfter(elapsed: 0)
    }

    var completesAt: Instant { since + holdMs }

    /// MIDWAY is due at half; floored so it precedes any PROGRESS of 0.500 or more.
    var midwayAt: Instant { since + holdMs / 2 }

    var nextDeadline: Instant {
        var d = completesAt
        if !midwaySent, midwayAt < d { d = midwayAt }
        if let p = nextProgress, p < d { d = p }
        return d
    }

    func isComplete(at now: Instant) -> Bool {
        now.since(since) >= holdMs
    }

    /// Progress in permille, 1000 only once complete.
    func permille(at now: Instant) -> Int {
        let elapsed = now.since(since)
        if elapsed <= 0 || holdMs == 0 { return holdMs == 0 ? 1000 : 0 }
        if elapsed >= holdMs { return 1000 }
        return Int(elapsed * 1000 / holdMs)
    }

    /// Advances to `now` and says what is owed. A late tick yields one PROGRESS with
    /// the true current value rather than a burst of stale ones.
    mutating func step(at now: Instant) -> Step {
        var step = Step()
        if !midwaySent, now >= midwayAt {
            midwaySent = true
            step.midway = true
        }
        if isComplete(at: now) {
            nextProgress = nil
            step.completed = true
            return step
        }
        if let due = nextProgress, now >= due {
            step.progressPermille = permille(at: now)
            nextProgress = progressAfter(elapsed: now.since(since))
        }
        return step
    }

    /// The first progress tick strictly after `elapsed`, unless completion comes first.
    private func progressAfter(elapsed: Int64) -> Instant? {
        guard progressMs > 0 else { return nil }
        let next = (elapsed / progressMs + 1) * progressMs
        return next < holdMs ? since + next : nil
    }
}
