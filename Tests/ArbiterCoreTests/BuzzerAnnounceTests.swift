import Testing

@testable import ArbiterCore

/// A full hall: members hear the first `announce` places, each player its own rank, and
/// `RANKING` reads the whole table, of the open round or the last closed one.
@Suite("buzzer rounds: announced places and RANKING")
struct BuzzerAnnounceTests {
    @Test func placesUpToAnnounceAreBroadcastAndLaterOnesAnsweredAlone() {
        var h = CoreHarness(.fairPanel(announce: 3))
        h.arm("quiz")
        h.down("red", 1)
        h.now = h.now + 1
        #expect(h.down("blue", 2) == ["RANKED blue rank=2 after_us=1000", "BUZZED blue u2 s2 rank=2 after_us=1000 #4"])
        h.now = h.now + 1
        // rank = announce: still told to every member.
        #expect(h.down("red", 3) == ["RANKED red rank=3 after_us=2000", "BUZZED red u3 s3 rank=3 after_us=2000 #5"])
        h.now = h.now + 1
        // rank = announce + 1: the player's own reply, no event, no seq taken.
        #expect(h.down("blue", 4) == ["RANKED blue rank=4 after_us=3000"])
        #expect(h.core.seq == 5)
        // A repeat press is its place again, whether announced or not.
        #expect(h.down("blue", 4) == ["RANKED blue rank=4 after_us=3000"])
        #expect(h.down("red", 3) == ["RANKED red rank=3 after_us=2000"])
        #expect(h.send(.ranking(group: "quiz"), 9, access: .view) == ["RANKING quiz won 1:u1+0,2:u2+1000,3:u3+2000,4:u4+3000"])
    }

    @Test func theSnapshotKeepsTheWholeRankingOfTheOpenRound() {
        var h = CoreHarness(.fairPanel(announce: 1))
        h.arm("quiz")
        for s in 1...5 { h.down("red", s) }
        let round = h.core.snapshot(at: h.now).groups.first { $0.group == "quiz" }
        #expect(round?.ranking.map(\.rank) == [1, 2, 3, 4, 5])
    }

    @Test func aClosedRoundIsReadBackUntilTheNextArm() {
        var h = CoreHarness(.fairPanel())
        h.arm("quiz")
        h.down("red", 1)
        h.now = h.now + 2
        h.down("blue", 2)
        h.send(.reset, 99)
        #expect(h.send(.ranking(group: "quiz"), 9, access: .view) == ["RANKING quiz closed 1:u1+0,2:u2+2000"])
        // A JOIN's snapshot shows the closed round without the old table.
        #expect(h.core.snapshot(at: h.now).groups.first { $0.group == "quiz" }?.ranking == [])
        h.arm("quiz")
        #expect(h.send(.ranking(group: "quiz"), 9, access: .view) == ["RANKING quiz armed "])
    }

    @Test func resetDuringALongRoundEndsItAndKeepsItsTable() {
        var h = CoreHarness(.fairPanel(announce: 2))
        h.arm("quiz")
        for s in 1...300 {
            h.now = h.now + 1
            h.down(s % 2 == 0 ? "red" : "blue", s)
        }
        let lines = h.send(.reset, 999)
        // Only ranks 1 and 2 took a seq (ARMED #1, PRESSED #2, FIRED #3, BUZZED #4).
        #expect(lines.contains("CLOSED quiz #5"))
        let table = h.send(.ranking(group: "quiz"), 9, access: .view)[0]
        #expect(table.hasPrefix("RANKING quiz closed 1:u1+0,2:u2+1000,"))
        #expect(table.hasSuffix(",300:u300+299000"))
        // The round is over: the next press is early.
        #expect(h.down("red", 301) == ["DENIED red early"])
    }

    @Test func rankingNeedsTheViewKeyAndABuzzerGroup() {
        var h = CoreHarness(.fairPanel())
        #expect(h.send(.ranking(group: "quiz"), 9, access: .none) == ["ERROR forbidden"])
        #expect(h.send(.ranking(group: "q"), 9, access: .view) == ["ERROR no-such-group"])
        #expect(h.send(.ranking(group: "nope"), 9, access: .view) == ["ERROR no-such-group"])
        #expect(h.send(.ranking(group: "quiz"), 9, access: .view) == ["RANKING quiz closed "])
    }
}
