import ArbiterLoadKit
import Testing

/// A buzzer group's `announce` in the event checker: members are told the places up to
/// it (BUZZED), each later place only to its player (RANKED), and the players' replies
/// are held to the same ranks as the events.
@Suite struct AnnounceCheckerTests {
    /// One ranked press of the round: player `p<player>` (session `s<player>`) answered
    /// `rank`, and whether the members are told it.
    struct Press {
        var player: Int
        var rank: Int
        var afterUs: Int
        var told: Bool
    }

    static let streams = ["obs": 1, "p2": 2, "p3": 3, "p4": 4, "p5": 5]
    static let order = ["obs", "p2", "p3", "p4", "p5"]

    static func snapshot(_ stream: String, seq: Int, fence: Int) -> [String] {
        FairHistoryScript.buttons.map {
            "\(stream): BUTTON load \($0.id) kind=tap group=\($0.group) policy=\($0.policy) state=idle owner=- progress=0.000"
        } + ["\(stream): ROUND load quiz state=closed", "\(stream): OK JOIN load members=5 fence=\(fence) seq=\(seq)"]
    }

    /// One round as its five members read it: s2 wins, then `presses` in order. Every
    /// member reads each event at once, the observer first; a player reads its RANKED
    /// between the events decided before and after its press (`replyFirst`: before any
    /// member has read its BUZZED, so the checker meets the reply before the event).
    static func round(_ presses: [Press], replyFirst: Bool = false) -> [String] {
        var lines: [String] = []
        for name in order {
            let s = streams[name]!
            lines += ["\(name): WELCOME session=s\(s) name=c\(s) proto=1", "\(name): OK HELLO name=c\(s) session=s\(s) role=admin"]
            lines += snapshot(name, seq: 0, fence: 0)
        }
        var seq = 0
        func broadcast(_ event: String, reply: (String, String)? = nil) {
            seq += 1
            if let reply, replyFirst { lines.append("\(reply.0): \(reply.1)") }
            for name in order {
                if let reply, !replyFirst, reply.0 == name { lines.append("\(name): \(reply.1)") }
                lines.append("\(name): \(event) seq=\(seq)")
            }
        }
        broadcast("ARMED load quiz")
        broadcast("PRESSED load red owner=c2 session=s2 fence=1", reply: ("p2", "GRANTED load red fence=1"))
        broadcast("FIRED load red owner=c2 session=s2 fence=1")
        for p in presses {
            let reply = ("p\(p.player)", "RANKED load blue rank=\(p.rank) after_us=\(p.afterUs)")
            if p.told {
                broadcast("BUZZED load blue name=c\(p.player) session=s\(p.player) rank=\(p.rank) after_us=\(p.afterUs)", reply: reply)
            } else {
                lines.append("\(reply.0): \(reply.1)")
            }
        }
        broadcast("RELEASED load red reason=reset owner=c2 fence=1")
        broadcast("CLOSED load quiz")
        for name in order { lines += ["\(name): (JOIN sent)"] + snapshot(name, seq: seq, fence: 1) }
        return lines
    }

    /// s3 is told second; s4 and s5 come after announce=2 and are answered only.
    static let clean = [
        Press(player: 3, rank: 2, afterUs: 120, told: true), Press(player: 4, rank: 3, afterUs: 150, told: false),
        Press(player: 5, rank: 4, afterUs: 150, told: false),
    ]

    static func broken(_ lines: [String], announce: Int = 2) -> Set<SafetyRule> {
        Set(HistoryScript.check(lines, buttons: FairHistoryScript.buttons, announce: announce).violations.map(\.rule))
    }

    @Test func placesAfterAnnounceAreAnsweredOnly() {
        for replyFirst in [false, true] {
            let checker = HistoryScript.check(Self.round(Self.clean, replyFirst: replyFirst), buttons: FairHistoryScript.buttons, announce: 2)
            #expect(checker.violations.isEmpty, "\(checker.violations)")
            #expect(checker.roundsArmed == 1 && checker.rankedRepliesChecked == 3)
        }
    }

    /// The rule itself: a third place told to every member when the group tells two.
    @Test func aBuzzedAfterAnnounceIsAViolation() {
        var presses = Self.clean
        presses[1].told = true
        #expect(Self.broken(Self.round(presses)) == [.buzzerAnnounce])
        #expect(Self.broken(Self.round(presses, replyFirst: true)) == [.buzzerAnnounce])
        // The same round is right for a group that tells three places.
        #expect(Self.broken(Self.round(presses), announce: 3).isEmpty)
    }

    /// The other half: a place within announce answered to its player, never told.
    @Test func anAnnouncedPlaceNeverToldIsAViolation() {
        var presses = Self.clean
        presses[0].told = false
        #expect(Self.broken(Self.round(presses)) == [.buzzerAnnounce])
    }

    /// Places told to nobody but their players still agree with `after_us`.
    @Test func afterUsGoingDownAfterAnnounce() {
        var presses = Self.clean
        presses[2].afterUs = 140
        #expect(Self.broken(Self.round(presses)) == [.buzzerRank])
    }

    /// One place per session, and one session per place, in the replies too.
    @Test func twoPlayersAnsweredOnePlace() {
        var presses = Self.clean
        presses[2].rank = 3
        #expect(Self.broken(Self.round(presses)) == [.buzzerRank])
        // A player answered the same place twice (it pressed again) is not a second place.
        #expect(Self.broken(Self.round(Self.clean + [Self.clean[2]])).isEmpty)
        var twice = Self.clean[2]
        twice.rank = 5
        twice.afterUs = 160
        #expect(Self.broken(Self.round(Self.clean + [twice])) == [.buzzerRank])
    }

    /// A player read the round's CLOSED before its RANKED: a press ranked while closed.
    @Test func aPlaceAnsweredAfterTheRoundClosed() {
        let lines = Self.round(Self.clean)
        let late = "p5: RANKED load blue rank=4 after_us=150"
        let closed = lines.first { $0.hasPrefix("p5: CLOSED load quiz") }!
        #expect(Self.broken(lines.moving(late, after: closed)) == [.buzzerRound])
    }

    /// Cluster mode: a snapshot the player did not ask for (its node resynchronised it)
    /// moved its stream past the round's end, so a RANKED read after it may belong to the
    /// round before: it is placed in no round rather than reported.
    @Test func aReplyAfterAResyncIsNotPlaced() {
        let lines = Self.round(Self.clean)
        let late = "p5: RANKED load blue rank=4 after_us=150"
        let closed = lines.first { $0.hasPrefix("p5: CLOSED load quiz") }!
        let seq = closed.split(separator: "=").last!
        var resynced = lines.filter { $0 != late }
        let at = resynced.firstIndex(of: closed)! + 1
        resynced.insert(contentsOf: Self.snapshot("p5", seq: Int(seq)!, fence: 1) + [late], at: at)
        #expect(Self.broken(resynced).isEmpty)
    }
}
