/// Joins and leaves of a large panel, counted until the next summary.
///
/// A member's JOINED or LEFT goes to every member, so when a venue's Wi-Fi drops and
/// thousands of kiosks leave at once, naming each leave to everyone still there is
/// quadratic in bytes: with 5,000 members it froze the server for seconds. Above
/// `PanelConfig.presenceSummaryAbove` members the panel tells counts instead, in at most
/// one `PRESENCE` event per `tickMs` (Phoenix Presence batches its `presence_diff` the
/// same way), so a mass disconnect or JOIN/LEAVE churn costs each member one line per
/// tick, whatever its size or rate.
struct PresenceTally: Sendable, Equatable {
    /// The longest a counted change waits to be told, and the shortest gap between two
    /// summaries: at most ten lines a second per panel.
    static let tickMs: Int64 = 100

    var joined = 0
    var left = 0
    /// When the counted changes are told; nil while nothing is counted.
    var dueAt: Instant?

    /// Counts a change at `now`; returns the summary's time when this change starts a
    /// tick (the core must be woken then).
    mutating func count(joined isJoin: Bool, now: Instant) -> Instant? {
        if isJoin { joined += 1 } else { left += 1 }
        guard dueAt == nil else { return nil }
        let due = now + PresenceTally.tickMs
        dueAt = due
        return due
    }

    /// The counts to tell, if their tick has come; the tally starts again.
    mutating func take(at now: Instant) -> (joined: Int, left: Int)? {
        guard let due = dueAt, due <= now else { return nil }
        defer { self = PresenceTally() }
        return (joined, left)
    }
}
