/// The rules of fair groups, applied in the panel's total order: a queue grants in the
/// order its line was joined, and a buzzer round has one winner and consistent ranks.
extension SafetyChecker {
    /// What the events say about one queue or buzzer group.
    struct FairGroup {
        /// Queue: sessions waiting, in order; nil until known (the group was busy at
        /// the first snapshot, so its line then is unknown).
        var line: [Int64]? = []
        /// Seq of the group's last RELEASED: a hand-off follows it at once.
        var releasedSeq: Int64 = -1
        var owned = false
        /// Buzzer: the round as the events tell it.
        var round: Round = .closed
        var lastRank: Int32 = 0
        var lastAfter: Int64 = 0
        var ranked: Set<Int64> = []
        var rounds = 0
        /// The recent rounds place by place, events and RANKED replies together.
        var book = RoundBook()

        enum Round { case closed, armed, won }
    }

    func applyFair(_ m: WireMessage, witness: Int32) {
        // Anything but a release or a grant (a QUEUED, a DEQUEUED, a JOINED, ...) is a
        // decision a waiting hand-off may not let pass (`deferredHandOff`).
        if m.kind != .released && m.kind != .pressed && m.kind != .fired { fairDecisionSeq = m.seq }
        switch m.kind {
        case .armed, .closed:
            guard m.group >= 0, Int(m.group) < fair.count else { return }
            let g = Int(m.group)
            fair[g].round = m.kind == .armed ? .armed : .closed
            fair[g].lastRank = 0
            fair[g].lastAfter = 0
            fair[g].ranked = []
            if m.kind == .armed {
                fair[g].rounds += 1
                report(fair[g].book.open(at: m.seq, announce: announce), witness: witness, m)
            } else {
                fair[g].book.close(at: m.seq)
            }
            return
        default:
            break
        }
        guard m.button >= 0, Int(m.button) < buttons.count else { return }
        let g = buttons.groups[Int(m.button)]
        let policy = buttons.policies[g]
        guard policy != .exclusive else { return }
        let evidence = [describe(Int(witness), m)]
        switch (m.kind, policy) {
        case (.pressed, .queue):
            if var line = fair[g].line, let head = line.first {
                if m.session != head {
                    violate(.queueOrder, "group \(buttons.groupNames[g]) granted to s\(m.session) while s\(head) is first in line", evidence)
                } else if m.seq != fair[g].releasedSeq + 1 && !deferredHandOff(releasedAt: fair[g].releasedSeq) {
                    violate(
                        .queueOrder,
                        "the head of \(buttons.groupNames[g]) was granted at seq=\(m.seq), not at once after the RELEASED at seq=\(fair[g].releasedSeq)",
                        evidence)
                }
                if let i = line.firstIndex(of: m.session) { line.remove(at: i) }
                fair[g].line = line
            }
            fair[g].owned = true
        case (.released, .queue):
            fair[g].owned = false
            fair[g].releasedSeq = m.seq
        case (.queuedEvent, .queue):
            guard var line = fair[g].line else { return }
            if !fair[g].owned { violate(.queueOrder, "QUEUED on the free group \(buttons.groupNames[g])", evidence) }
            line.append(m.session)
            if Int(m.position) != line.count {
                violate(.queueOrder, "QUEUED position=\(m.position) but the line of \(buttons.groupNames[g]) is now \(line.count) long", evidence)
            }
            fair[g].line = line
        case (.dequeued, .queue):
            guard var line = fair[g].line else { return }
            guard let i = line.firstIndex(of: m.session) else {
                return violate(.queueOrder, "DEQUEUED s\(m.session), which is not in the line of \(buttons.groupNames[g])", evidence)
            }
            if i + 1 != Int(m.position) { violate(.queueOrder, "DEQUEUED position=\(m.position) but s\(m.session) was at \(i + 1)", evidence) }
            line.remove(at: i)
            fair[g].line = line
        case (.pressed, .buzzer):
            if fair[g].round != .armed {
                let why = fair[g].round == .closed ? "while the group is closed" : "after the round was won"
                violate(.buzzerRound, "a DOWN was accepted (PRESSED) \(why)", evidence)
            }
            fair[g].round = .won
            fair[g].lastRank = 1
            fair[g].lastAfter = 0
            fair[g].ranked = [m.session]
            report(fair[g].book.told(rank: 1, session: m.session, afterUs: 0), witness: witness, m)
        case (.buzzed, .buzzer):
            if fair[g].round != .won {
                violate(.buzzerRound, "BUZZED while the round is \(fair[g].round == .closed ? "closed" : "armed without a winner")", evidence)
            }
            if m.rank != fair[g].lastRank + 1 || m.afterUs < fair[g].lastAfter {
                violate(.buzzerRank, "rank=\(m.rank) after_us=\(m.afterUs) follows rank=\(fair[g].lastRank) after_us=\(fair[g].lastAfter)", evidence)
            }
            if !fair[g].ranked.insert(m.session).inserted {
                violate(.buzzerRank, "s\(m.session) ranked twice in one round", evidence)
            }
            // Places after `announce` are each told to their player alone (RANKED).
            if Int(m.rank) > announce {
                violate(.buzzerAnnounce, "BUZZED rank=\(m.rank) told to the members, beyond the group's announce=\(announce)", evidence)
            }
            fair[g].lastRank = m.rank
            fair[g].lastAfter = m.afterUs
            report(fair[g].book.told(rank: m.rank, session: m.session, afterUs: m.afterUs), witness: witness, m)
        default:
            break
        }
    }

    /// The model starts from a snapshot taken in the middle of a round (a member that
    /// joined, or its node resynchronised it, after the ARMED): the round goes on from
    /// its ROUND and RANK lines. Before, it started closed, and the round's next BUZZED
    /// was reported as one "while the round is closed" (nemesis buzz seed 70).
    func startRounds(
        at seq: Int64, _ rounds: [(group: Int32, state: RoundState)], _ ranks: [(button: Int32, session: Int64, rank: Int32, afterUs: Int64)]
    ) {
        for (group, state) in rounds where Int(group) < fair.count {
            let g = Int(group)
            fair[g].round = state == .armed ? .armed : state == .won ? .won : .closed
            fair[g].lastRank = 0
            fair[g].lastAfter = 0
            fair[g].ranked = []
            let places = ranks.filter { Int($0.button) < buttons.count && buttons.groups[Int($0.button)] == g }
            fair[g].book.restart(at: seq, open: fair[g].round != .closed, places: places.map { ($0.session, $0.rank, $0.afterUs) })
        }
        for rank in ranks where Int(rank.button) < buttons.count {
            let g = buttons.groups[Int(rank.button)]
            fair[g].ranked.insert(rank.session)
            if rank.rank > fair[g].lastRank {
                fair[g].lastRank = rank.rank
                fair[g].lastAfter = rank.afterUs
            }
        }
    }

    /// A player's RANKED reply, placed in the round its stream is reading (`RoundBook`).
    /// A stream of another term than the model's, or not joined, reads no round the
    /// model knows; one moved on by a snapshot it did not ask for cannot tell which.
    func rankedReply(_ stream: Int, _ m: WireMessage) {
        let s = streams[stream]
        guard modelStarted, s.joined, !s.resynced, s.term == modelTerm, s.session >= 0, m.button >= 0, Int(m.button) < buttons.count else {
            return
        }
        let g = buttons.groups[Int(m.button)]
        guard buttons.policies[g] == .buzzer else { return }
        let findings = fair[g].book.replied(at: s.expected - 1, session: s.session, rank: m.rank, afterUs: m.afterUs)
        for f in findings { violate(f.rule, f.message, [describe(stream, m)]) }
    }

    private func report(_ findings: [RoundBook.Finding], witness: Int32, _ m: WireMessage) {
        for f in findings { violate(f.rule, f.message, [describe(Int(witness), m)]) }
    }

    /// Cluster mode: a hand-off waits when the leader's block of fences is used up, until
    /// the next block is reserved in etcd; then every waiting hand-off goes, group by group
    /// (nemesis seed 63: fences 424001 and 424002, 0.3 s after the releases at 424000).
    /// Meanwhile nothing else is decided (a DOWN is refused until fences come), so the only
    /// events between a release and its late hand-off are other releases and other
    /// groups' hand-offs.
    private func deferredHandOff(releasedAt seq: Int64) -> Bool {
        fairDecisionSeq < seq
    }

    /// At the end, whatever the last snapshot showed: every round still in the book is
    /// checked whole (its places were all read before the run's final JOINs).
    func finishRounds() {
        for g in fair.indices where buttons.policies[g] == .buzzer {
            for f in fair[g].book.finish(announce: announce) { violate(f.rule, f.message, []) }
        }
    }

    /// At the end, once every button is idle: nobody may still wait in a line.
    func finishFair() {
        for g in fair.indices where buttons.policies[g] == .queue {
            if let line = fair[g].line, !line.isEmpty {
                violate(
                    .queueLeft,
                    "s\(line.map(String.init).joined(separator: ", s")) still in the line of \(buttons.groupNames[g]) with every button idle: queued, never granted, never dequeued",
                    [])
            }
        }
    }

    /// Buzzer rounds opened, over all groups.
    public var roundsArmed: Int { fair.reduce(0) { $0 + $1.rounds } }

    /// Players' RANKED replies placed in their rounds and checked against them.
    public var rankedRepliesChecked: Int { fair.reduce(0) { $0 + $1.book.placed } }
}
