import Testing
@testable import ArbiterCore

@Suite("buzzer groups: rounds with a ranking")
struct BuzzerGroupTests {
    @Test func armThenFirstDownWinsAsATapAndLaterOnesAreRanked() {
        var h = CoreHarness(.fairPanel())
        #expect(h.arm("quiz") == ["OK ARM quiz", "ARMED quiz #1"])
        #expect(h.down("red", 1) == ["GRANTED red fence=1", "PRESSED red u1 s1 fence=1 #2", "FIRED red u1 s1 fence=1 #3"])
        h.now = Instant(nanoseconds: h.now.nanoseconds + 37_123_999)
        #expect(h.down("blue", 2) == ["RANKED blue rank=2 after_us=37123", "BUZZED blue u2 s2 rank=2 after_us=37123 #4"])
        h.now = h.now + 5
        #expect(h.down("red", 3) == ["RANKED red rank=3 after_us=42123", "BUZZED red u3 s3 rank=3 after_us=42123 #5"])
        // Pressing again changes nothing.
        #expect(h.down("red", 3) == ["RANKED red rank=3 after_us=42123"])
        #expect(h.down("red", 1) == ["GRANTED red fence=1"])
        let round = h.core.snapshot(at: h.now).groups[1]
        #expect(round.round == .won)
        #expect(round.ranking.map(\.name) == ["u1", "u2", "u3"])
        #expect(round.ranking.map(\.afterMicroseconds) == [0, 37123, 42123])
    }

    /// Two DOWNs of one read batch carry the same arrival time: the rank follows the
    /// order of their bytes, and the second is 0 µs after the first.
    @Test func twoDownsInOneReadBatchRankInByteOrder() {
        var h = CoreHarness(.fairPanel())
        h.arm("quiz")
        h.down("red", 1)
        h.now = h.now + 3
        #expect(h.down("blue", 5).first == "RANKED blue rank=2 after_us=3000")
        #expect(h.down("red", 2).first == "RANKED red rank=3 after_us=3000")
        #expect(h.down("blue", 4).first == "RANKED blue rank=4 after_us=3000")
    }

    @Test func theWinnersUpDoesNotEndTheRound() {
        var h = CoreHarness(.fairPanel())
        h.arm("quiz")
        h.down("red", 1)
        #expect(h.up("red", 1) == ["OK UP red", "RELEASED red up u1 fence=1 #4"])
        #expect(h.down("blue", 2).first == "RANKED blue rank=2 after_us=0")
    }

    @Test func anEarlyPressIsDeniedAndLocksOutUntilExactlyEarlyLockoutMs() {
        var h = CoreHarness(.fairPanel(lockoutMs: 250))
        let early = h.now
        #expect(h.down("red", 1) == ["DENIED red early"])
        h.now = h.now + 100
        h.arm("quiz")
        h.now = Instant(nanoseconds: (early + 250).nanoseconds - 1)
        #expect(h.down("blue", 1) == ["DENIED blue locked-out"])
        #expect(h.down("blue", 2).first == "GRANTED blue fence=1")
        h.now = early + 250
        #expect(h.down("red", 1).first == "RANKED red rank=2 after_us=0")  // 1 ns after blue
    }

    @Test func aPressDuringTheLockoutDoesNotExtendIt() {
        var h = CoreHarness(.fairPanel(lockoutMs: 250))
        let early = h.now
        h.down("red", 1)
        h.now = h.now + 200
        #expect(h.down("red", 1) == ["DENIED red locked-out"])
        h.now = early + 250
        #expect(h.down("red", 1) == ["DENIED red early"])
    }

    @Test func resetEndsTheRoundAndNextPressesAreEarly() {
        var h = CoreHarness(.fairPanel(lockoutMs: 0))
        h.arm("quiz")
        h.down("red", 1)
        h.down("blue", 2)
        #expect(h.send(.reset, 9) == ["OK RESET", "CLOSED quiz #5", "RELEASED red reset u1 fence=1 #6"])
        #expect(h.core.snapshot(at: h.now).groups[1].round == .closed)
        #expect(h.core.snapshot(at: h.now).groups[1].ranking.isEmpty)
        #expect(h.down("blue", 2) == ["DENIED blue early"])
        #expect(h.down("blue", 2) == ["DENIED blue early"], "no lockout with early_lockout_ms 0")
    }

    @Test func theNextArmEndsTheRound() {
        var h = CoreHarness(.fairPanel())
        h.arm("quiz")
        h.down("red", 1)
        h.down("blue", 2)
        #expect(h.arm("quiz") == ["OK ARM quiz", "RELEASED red reset u1 fence=1 #5", "ARMED quiz #6"])
        #expect(h.down("blue", 2).first == "GRANTED blue fence=2")
    }

    @Test func armNeedsAdminAndABuzzerGroup() {
        var h = CoreHarness(.fairPanel())
        #expect(h.arm("quiz", access: .press) == ["ERROR forbidden"])
        #expect(h.arm("q") == ["ERROR no-such-group"])
        #expect(h.arm("nope") == ["ERROR no-such-group"])
        #expect(h.core.seq == 0)
    }

    @Test func aRankedSessionDisconnectingKeepsItsPlace() {
        var h = CoreHarness(.fairPanel())
        h.arm("quiz")
        h.down("red", 1)
        h.down("blue", 2)
        h.disconnect(2)
        #expect(h.core.snapshot(at: h.now).groups[1].ranking.map(\.rank) == [1, 2])
    }
}
