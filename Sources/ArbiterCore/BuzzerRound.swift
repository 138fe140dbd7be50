/// The round of one `buzzer` group and its early-press lockouts.
struct BuzzerRound: Sendable, Equatable {
    var state: RoundState = .closed
    /// The winner's arrival, which every `after_us` is measured from.
    var wonAt: Instant?
    var ranking: [Ranking] = []
    /// Sessions that pressed early, until when they stay locked out.
    var lockouts: [SessionID: Instant] = [:]

    mutating func open() {
        state = .armed
        wonAt = nil
        ranking.removeAll()
    }

    /// The ranking stays, for `RANKING`, until the next round opens.
    mutating func close() {
        state = .closed
        wonAt = nil
    }

    /// Whether `session` is still locked out at `now`; an expired lockout is forgotten.
    mutating func isLockedOut(_ session: SessionID, at now: Instant) -> Bool {
        guard let until = lockouts[session] else { return false }
        if now < until { return true }
        lockouts.removeValue(forKey: session)
        return false
    }
}
