/// The round of one `buzzer` group and its early-press lockouts.
struct BuzzerRound: Sendable, Equatable {
    var state: RoundState = .closed
    /// When the ARM that opened the round was read: a press that arrived before it is
    /// early, even when it is decided after it.
    var openedAt: Instant?
    /// The winner's arrival, which every `after_us` is measured from.
    var wonAt: Instant?
    var ranking: [Ranking] = []
    /// Presses read and not ranked yet, by arrival (then by the order they were read).
    var pending: [PendingPress] = []
    /// The latest arrival ranked so far: a press ranked after it that arrived earlier came
    /// later than the decision window allowed for.
    var latestRanked: Instant?
    /// Presses ranked by `takeDue` with a read-through given: once read through, or when
    /// their window ended first (a metric of how often the reactors were that late).
    var rankedReadThrough: UInt64 = 0
    var rankedAtWindow: UInt64 = 0
    /// Sessions that pressed early, until when they stay locked out.
    var lockouts: [SessionID: Instant] = [:]
    /// The same lockouts by player, so that a new connection of the same player is
    /// locked out too.
    var playerLockouts: [Player: Instant] = [:]

    mutating func open(at now: Instant) {
        state = .armed
        openedAt = now
        wonAt = nil
        latestRanked = nil
        ranking.removeAll()
        // Expired lockouts are forgotten here too: a player who never presses again
        // would keep its entry for ever.
        if !lockouts.isEmpty { lockouts = lockouts.filter { now < $0.value } }
        if !playerLockouts.isEmpty { playerLockouts = playerLockouts.filter { now < $0.value } }
    }

    /// The ranking stays, for `RANKING`, until the next round opens. Called with nothing
    /// pending (the core ranks what waits first).
    mutating func close() {
        state = .closed
        wonAt = nil
        openedAt = nil
    }

    /// Whether `session`, or another session of `player`, is locked out at `now`; an
    /// expired lockout is forgotten.
    mutating func isLockedOut(_ session: SessionID, _ player: Player, at now: Instant) -> Bool {
        if let until = lockouts[session] {
            if now < until { return true }
            lockouts.removeValue(forKey: session)
        }
        if let until = playerLockouts[player] {
            if now < until { return true }
            playerLockouts.removeValue(forKey: player)
        }
        return false
    }

    mutating func lockOut(_ session: SessionID, _ player: Player, until: Instant) {
        lockouts[session] = until
        playerLockouts[player] = until
    }

    func pendingIndex(of session: SessionID) -> Int? {
        pending.isEmpty ? nil : pending.firstIndex { $0.session == session }
    }

    /// Puts `press` in its place by arrival; among equal arrivals (two DOWNs of one
    /// read), after those read before it.
    mutating func enqueue(_ press: PendingPress) {
        var i = pending.count
        while i > 0, pending[i - 1].arrival > press.arrival { i -= 1 }
        pending.insert(press, at: i)
    }

    /// The longest a press ranked after the winner waits for every reactor to read
    /// through its arrival, where they say how far they have (`readThrough`). A reactor
    /// kept off its core for longer than the window (two reactors and a load generator on
    /// two cores: 14 % of the presses of a 300-player round, `bench/arrival.sh`) read a
    /// press that arrived earlier after the window had ranked a later one; waiting for it
    /// costs only that player's own RANKED, and only while a reactor is that late.
    static let rankCapUs: Int64 = 20_000

    /// How long the earliest waiting press may wait for one that arrived before it: the
    /// group's window while the round has no winner (what the window may add to a
    /// GRANTED); once it has one, `rankCapUs` if the reactors say how far they have read,
    /// else the window. A window of 0 waits for nothing, winner or not.
    func capUs(windowUs: Int64, readThroughKnown: Bool) -> Int64 {
        state == .armed || !readThroughKnown || windowUs == 0 ? windowUs : max(windowUs, Self.rankCapUs)
    }

    /// When the earliest waiting press is ranked at the latest.
    func nextDue(windowUs: Int64, readThroughKnown: Bool) -> Instant? {
        let cap = capUs(windowUs: windowUs, readThroughKnown: readThroughKnown)
        return pending.first.map { Instant(nanoseconds: $0.arrival.nanoseconds &+ cap &* 1000) }
    }

    /// The earliest waiting press, if its window has passed at `now`, or if it arrived by
    /// `readThrough`: every press that arrived before it has then been read, so none can
    /// still come to take its place, and waiting out the window would only delay it.
    mutating func takeDue(at now: Instant, windowUs: Int64, readThrough: Instant?) -> PendingPress? {
        guard let first = pending.first else { return nil }
        let read = readThrough.map { first.arrival <= $0 } ?? false
        let cap = capUs(windowUs: windowUs, readThroughKnown: readThrough != nil)
        guard read || first.arrival.nanoseconds &+ cap &* 1000 <= now.nanoseconds else { return nil }
        if read { rankedReadThrough += 1 } else if readThrough != nil { rankedAtWindow += 1 }
        return pending.removeFirst()
    }

    /// Ranks a press that arrived at `arrival` behind those ranked so far; false when it
    /// arrived before one of them (it came later than the window allowed for, and is
    /// ranked last all the same: a place already told is never taken back).
    mutating func rank(
        button: Int, name: String, session: SessionID, arrival: Instant
    ) -> (ranking: Ranking, inOrder: Bool) {
        let inOrder = latestRanked.map { arrival >= $0 } ?? true
        if inOrder { latestRanked = arrival }
        // after_us never goes below the rank before it, so ranks and after_us agree.
        let measured = max(0, arrival.microseconds(since: wonAt ?? arrival))
        let floor = ranking.last?.afterMicroseconds ?? 0
        let ranked = Ranking(button: button, name: name, session: session, rank: ranking.count + 1, afterMicroseconds: max(measured, floor))
        ranking.append(ranked)
        return (ranked, inOrder)
    }

    /// Opens the ranking with its winner.
    mutating func win(button: Int, name: String, session: SessionID, arrival: Instant) {
        state = .won
        wonAt = arrival
        latestRanked = arrival
        ranking = [Ranking(button: button, name: name, session: session, rank: 1, afterMicroseconds: 0)]
    }
}
