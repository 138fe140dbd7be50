/// A buzzer group's recent rounds, place by place, as two sources tell them: the panel
/// order (the winner's PRESSED, BUZZED for the announced places, a snapshot's RANK lines)
/// and the players' own RANKED replies, which alone carry the places after `announce`.
/// The checker holds them to agree: one session per place and one place per session,
/// `after_us` never going down as the rank goes up, and every place within `announce`
/// that a player was answered also told to the members.
///
/// A reply is placed in the round its stream was reading when the reply came: a player
/// presses only after it has read its round's ARMED (or a snapshot showing the round
/// open), and its reply comes before any event decided after its press, such as the
/// round's CLOSED. So streams read at different paces still fill the right round, and a
/// RANKED read after its stream read the round's end is a press ranked while closed.
/// The last `kept` rounds stay in the book; a round is checked whole when it leaves it,
/// by then every stream has long read past it. Memory: `kept` rounds of places.
struct RoundBook {
    struct Place {
        var session: Int64 = -1
        var afterUs: Int64 = -1
        /// Told to the members (PRESSED, BUZZED, a snapshot's RANK), answered to the player.
        var told = false
        var replied = false
    }

    struct Round {
        /// The seq of the round's ARMED, or of the snapshot the model started from.
        var opened: Int64
        /// The seq of the event that ended it (CLOSED, the next ARMED); nil while open.
        var closed: Int64?
        /// By rank - 1.
        var places: [Place] = []
        var rankOf: [Int64: Int32] = [:]
    }

    struct Finding: Equatable {
        var rule: SafetyRule
        var message: String
    }

    static let kept = 8
    /// Far above any real round (a panel's `announce` is at most 100,000): a rank beyond
    /// it is reported rather than given an array of its size.
    static let highestRank: Int32 = 10_000_000
    private(set) var rounds: [Round] = []
    /// RANKED replies that fell in no round of the book: read before the model's first
    /// snapshot, or after their round left the book.
    private(set) var unplaced = 0
    /// RANKED replies placed in their round and held to its places.
    private(set) var placed = 0

    /// ARMED at `seq`: the round before it ends there, and the oldest leaves the book.
    mutating func open(at seq: Int64, announce: Int) -> [Finding] {
        close(at: seq)
        rounds.append(Round(opened: seq))
        guard rounds.count > RoundBook.kept else { return [] }
        return RoundBook.check(rounds.removeFirst(), announce: announce)
    }

    /// CLOSED at `seq`.
    mutating func close(at seq: Int64) {
        if let last = rounds.indices.last, rounds[last].closed == nil { rounds[last].closed = seq }
    }

    /// The model (re)starts from a snapshot at `seq`: what came before it is unknown, so
    /// nothing before it is checked. An open round goes on with the snapshot's places.
    mutating func restart(at seq: Int64, open: Bool, places: [(session: Int64, rank: Int32, afterUs: Int64)]) {
        rounds = []
        guard open else { return }
        rounds.append(Round(opened: seq))
        for p in places { _ = RoundBook.place(&rounds[0], rank: p.rank, session: p.session, afterUs: p.afterUs, told: true) }
    }

    /// The panel order told the members a place of the open round.
    mutating func told(rank: Int32, session: Int64, afterUs: Int64) -> [Finding] {
        guard let last = rounds.indices.last, rounds[last].closed == nil else { return [] }
        return RoundBook.place(&rounds[last], rank: rank, session: session, afterUs: afterUs, told: true).map { [$0] } ?? []
    }

    /// A player's RANKED, read by a stream that had read the panel order up to `at`.
    mutating func replied(at: Int64, session: Int64, rank: Int32, afterUs: Int64) -> [Finding] {
        guard let r = rounds.lastIndex(where: { $0.opened <= at }) else {
            unplaced += 1
            return []
        }
        if let closed = rounds[r].closed, closed <= at {
            return [
                Finding(
                    rule: .buzzerRound,
                    message: "s\(session) answered RANKED rank=\(rank) after its stream read the round's end (seq=\(closed)): a press ranked while closed")
            ]
        }
        placed += 1
        return RoundBook.place(&rounds[r], rank: rank, session: session, afterUs: afterUs, told: false).map { [$0] } ?? []
    }

    /// The end of the run: every round still in the book is checked.
    mutating func finish(announce: Int) -> [Finding] {
        defer { rounds = [] }
        return rounds.flatMap { RoundBook.check($0, announce: announce) }
    }

    private static func place(_ round: inout Round, rank: Int32, session: Int64, afterUs: Int64, told: Bool) -> Finding? {
        let source = told ? "told" : "answered"
        guard rank >= 1, rank <= RoundBook.highestRank else {
            return Finding(rule: .buzzerRank, message: "s\(session) \(source) rank=\(rank)")
        }
        let i = Int(rank) - 1
        if i >= round.places.count { round.places += Array(repeating: Place(), count: i + 1 - round.places.count) }
        let p = round.places[i]
        if p.session >= 0, p.session != session || p.afterUs != afterUs {
            return Finding(
                rule: .buzzerRank,
                message:
                    "rank=\(rank) is s\(p.session) after_us=\(p.afterUs) (\(p.told ? "told" : "answered")) and s\(session) after_us=\(afterUs) (\(source)) in one round"
            )
        }
        if let other = round.rankOf[session], other != rank {
            return Finding(rule: .buzzerRank, message: "s\(session) has rank=\(other) and rank=\(rank) in one round")
        }
        round.rankOf[session] = rank
        round.places[i].session = session
        round.places[i].afterUs = afterUs
        if told { round.places[i].told = true } else { round.places[i].replied = true }
        return nil
    }

    /// A whole round: `after_us` in rank order, and every answered place within
    /// `announce` told to the members.
    static func check(_ round: Round, announce: Int) -> [Finding] {
        var findings: [Finding] = []
        var previous: (rank: Int, afterUs: Int64)?
        for (i, p) in round.places.enumerated() where p.session >= 0 {
            if let previous, p.afterUs < previous.afterUs {
                findings.append(
                    Finding(
                        rule: .buzzerRank,
                        message: "rank=\(i + 1) (s\(p.session)) after_us=\(p.afterUs) is below rank=\(previous.rank) after_us=\(previous.afterUs)"))
            }
            previous = (i + 1, p.afterUs)
            if p.replied, !p.told, i + 1 <= announce {
                findings.append(
                    Finding(
                        rule: .buzzerAnnounce,
                        message: "s\(p.session) was answered RANKED rank=\(i + 1), within announce=\(announce), but no member was told its BUZZED"))
            }
        }
        return findings
    }
}
