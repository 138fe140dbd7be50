import Testing

@testable import ArbiterCore

/// Ranks by arrival: with two reactors a press can be read (and decided) after one that
/// arrived later. Each press of an open round waits for the group's decision window
/// after its arrival, then takes its place by arrival.
@Suite("buzzer groups: ranked by arrival after a decision window")
struct BuzzerArrivalTests {
    /// The press read second arrived first: it wins once the window has passed, and the
    /// one read first is ranked behind it.
    @Test func theEarliestArrivalWinsWhenItIsReadWithinTheWindow() {
        var h = CoreHarness(.fairPanel(windowUs: 2000))
        h.arm("quiz")
        h.skip(100)
        #expect(h.down("red", 2, arrivedUsAgo: 10) == ["(reply deferred)"])
        h.skipMicros(300)
        // Read 300 µs later by the other reactor, but arrived 100 µs before s2's press.
        #expect(h.down("blue", 1, arrivedUsAgo: 410) == ["(reply deferred)"])
        #expect(h.core.snapshot(at: h.now).groups[1].round == .armed)
        #expect(h.core.nextDeadline == Instant(nanoseconds: h.now.nanoseconds - 410_000 + 2_000_000))
        #expect(
            h.runTimers(for: 3) == [
                "answer s1: GRANTED blue fence=1", "PRESSED blue u1 s1 fence=1 #2", "FIRED blue u1 s1 fence=1 #3",
                "answer s2: RANKED red rank=2 after_us=100", "BUZZED red u2 s2 rank=2 after_us=100 #4",
            ])
        #expect(h.core.snapshot(at: h.now).groups[1].ranking.map(\.name) == ["u1", "u2"])
        #expect(h.core.lateArrivals == 0)
    }

    /// The grant's timeout counts from when its DOWN was read, as any grant's.
    @Test func theWinnersTimeoutCountsFromItsRead() {
        var h = CoreHarness(.fairPanel(windowUs: 2000))
        h.arm("quiz")
        let read = h.now
        h.down("red", 1, arrivedUsAgo: 0)
        h.runTimers(for: 2)
        #expect(h.core.nextDeadline == read + ButtonConfig.defaultTimeout(for: .tap))
    }

    /// A press whose window passed before it was read is answered by its own command.
    @Test func aPressReadAfterItsWindowIsAnsweredAtOnce() {
        var h = CoreHarness(.fairPanel(windowUs: 2000))
        h.arm("quiz")
        h.skip(5)
        #expect(h.down("red", 1, arrivedUsAgo: 2500) == ["GRANTED red fence=1", "PRESSED red u1 s1 fence=1 #2", "FIRED red u1 s1 fence=1 #3"])
    }

    /// A press read after one that arrived later was already ranked cannot take that
    /// place back: it is ranked last, with the after_us of the rank before it, and counted.
    @Test func aPressLaterThanTheWindowIsRankedLastAndCounted() {
        var h = CoreHarness(.fairPanel(windowUs: 1000))
        h.arm("quiz")
        h.down("red", 1, arrivedUsAgo: 0)
        h.skipMicros(500)
        h.down("blue", 2, arrivedUsAgo: 0)
        h.runTimers(for: 2)
        // Arrived 2,100 µs ago: before s2's press, whose place is told.
        #expect(h.down("red", 3, arrivedUsAgo: 2100) == ["RANKED red rank=3 after_us=500", "BUZZED red u3 s3 rank=3 after_us=500 #5"])
        #expect(h.core.lateArrivals == 1)
    }

    /// What a session sends while its press waits runs once that press is ranked, in
    /// order: its UP after its GRANTED, as if the press had been decided at once.
    @Test func anUpWhileThePressWaitsRunsAfterIt() {
        var h = CoreHarness(.fairPanel(windowUs: 2000))
        h.arm("quiz")
        h.down("red", 1, arrivedUsAgo: 0)
        h.down("blue", 2, arrivedUsAgo: 0)
        h.skipMicros(100)
        #expect(h.up("red", 1) == ["(reply deferred)"])
        #expect(h.up("blue", 2) == ["(reply deferred)"])
        #expect(
            h.runTimers(for: 3) == [
                "answer s1: GRANTED red fence=1", "PRESSED red u1 s1 fence=1 #2", "FIRED red u1 s1 fence=1 #3",
                "answer s1: OK UP red", "RELEASED red up u1 fence=1 #4",
                "answer s2: RANKED blue rank=2 after_us=0", "BUZZED blue u2 s2 rank=2 after_us=0 #5",
                "answer s2: ERROR not-owner",
            ])
    }

    /// Pressing again while the first press waits gets the same answer, after it.
    @Test func aSecondDownWhileThePressWaitsGetsTheSameAnswer() {
        var h = CoreHarness(.fairPanel(windowUs: 2000))
        h.arm("quiz")
        h.down("red", 1, arrivedUsAgo: 0)
        h.down("blue", 2, arrivedUsAgo: 0)
        #expect(h.down("red", 2, arrivedUsAgo: 0) == ["(reply deferred)"])
        let lines = h.runTimers(for: 3)
        #expect(
            lines.suffix(3) == [
                "answer s2: RANKED blue rank=2 after_us=0", "BUZZED blue u2 s2 rank=2 after_us=0 #4", "answer s2: RANKED red rank=2 after_us=0",
            ])
    }

    /// A session gone while its press waits is still ranked by its arrival; its win is
    /// released at once, and nobody is answered.
    @Test func aWinnerGoneWhileItsPressWaitsWinsAndIsReleased() {
        var h = CoreHarness(.fairPanel(windowUs: 2000))
        h.arm("quiz")
        h.down("red", 1, arrivedUsAgo: 0)
        h.down("blue", 2, arrivedUsAgo: 0)
        h.disconnect(1)
        #expect(
            h.runTimers(for: 3) == [
                "PRESSED red u1 s1 fence=1 #2", "FIRED red u1 s1 fence=1 #3", "RELEASED red disconnect u1 fence=1 #4",
                "answer s2: RANKED blue rank=2 after_us=0", "BUZZED blue u2 s2 rank=2 after_us=0 #5",
            ])
        #expect(h.up("red", 1) == ["ERROR not-owner"])
    }

    /// RESET and ARM come after the presses that wait: those are ranked first.
    @Test func resetAndArmRankTheWaitingPressesFirst() {
        var h = CoreHarness(.fairPanel(windowUs: 2000))
        h.arm("quiz")
        h.down("red", 1, arrivedUsAgo: 0)
        #expect(
            h.send(.reset, 9) == [
                "OK RESET", "answer s1: GRANTED red fence=1", "PRESSED red u1 s1 fence=1 #2", "FIRED red u1 s1 fence=1 #3",
                "CLOSED quiz #4", "RELEASED red reset u1 fence=1 #5",
            ])
        h.arm("quiz")
        h.down("blue", 2, arrivedUsAgo: 0)
        #expect(
            h.arm("quiz") == [
                "OK ARM quiz", "answer s2: GRANTED blue fence=2", "PRESSED blue u2 s2 fence=2 #7", "FIRED blue u2 s2 fence=2 #8",
                "RELEASED blue reset u2 fence=2 #9", "ARMED quiz #10",
            ])
        #expect(h.runTimers(for: 3).isEmpty)
    }

    /// A press that arrived before the ARM was read could not have been an answer to it,
    /// even when another reactor read it after: early.
    @Test func aPressThatArrivedBeforeTheArmIsEarly() {
        var h = CoreHarness(.fairPanel(lockoutMs: 250, windowUs: 2000))
        h.arm("quiz")
        h.skipMicros(50)
        #expect(h.down("red", 1, arrivedUsAgo: 60) == ["DENIED red early"])
        #expect(h.down("red", 1, arrivedUsAgo: 0) == ["DENIED red locked-out"])
    }

    /// With no window every press is decided as it is read, in that order (today's
    /// rule), and after_us follows the arrivals without going below the rank before.
    @Test func withoutAWindowPressesAreRankedAsTheyAreRead() {
        var h = CoreHarness(.fairPanel(windowUs: 0))
        h.arm("quiz")
        h.skip(1)
        #expect(h.down("red", 1, arrivedUsAgo: 10).first == "GRANTED red fence=1")
        h.skipMicros(100)
        #expect(h.down("blue", 2, arrivedUsAgo: 50).first == "RANKED blue rank=2 after_us=60")
        #expect(h.down("red", 3, arrivedUsAgo: 90).first == "RANKED red rank=3 after_us=60")
        #expect(h.core.lateArrivals == 1)
    }
}

/// An early press locks out the player: its name from its client's address, on any
/// connection.
@Suite("buzzer groups: the lockout follows the player")
struct BuzzerLockoutTests {
    @Test func aNewConnectionOfTheSamePlayerIsLockedOut() {
        var h = CoreHarness(.fairPanel(lockoutMs: 250))
        #expect(h.down("red", 1, arrivedUsAgo: 0, name: "alice", address: "10.0.0.7") == ["DENIED red early"])
        h.skip(10)
        h.arm("quiz")
        h.skip(1)
        // The same name from the same address, on a new connection right after ARM.
        #expect(h.down("red", 2, arrivedUsAgo: 0, name: "alice", address: "10.0.0.7") == ["DENIED red locked-out"])
        // Another player: the same name elsewhere, another name from the same address.
        #expect(h.down("blue", 3, arrivedUsAgo: 0, name: "alice", address: "10.0.0.8").first == "GRANTED blue fence=1")
        #expect(h.down("blue", 4, arrivedUsAgo: 0, name: "bob", address: "10.0.0.7").first == "RANKED blue rank=2 after_us=0")
        h.skip(240)
        #expect(h.down("red", 2, arrivedUsAgo: 0, name: "alice", address: "10.0.0.7").first == "RANKED red rank=3 after_us=240000")
    }

    /// The old session renamed is still locked out: the lockout is its session's too.
    @Test func theSessionStaysLockedOutUnderAnotherName() {
        var h = CoreHarness(.fairPanel(lockoutMs: 250))
        h.down("red", 1, arrivedUsAgo: 0, name: "alice", address: "10.0.0.7")
        h.arm("quiz")
        #expect(h.down("red", 1, arrivedUsAgo: 0, name: "carol", address: "10.0.0.7") == ["DENIED red locked-out"])
    }
}
