import Testing

@testable import ArbiterCore

/// The read watermark: the host tells the core up to when every press has been read
/// (`readThrough`), and a waiting press that arrived by then is ranked without waiting
/// out its window; the window stays the cap.
@Suite("buzzer groups: ranked once every reactor has read through the arrival")
struct BuzzerReadThroughTests {
    /// Not ranked while a reactor's read-through is before the press's arrival; ranked on
    /// the next wake-up once it reaches it, well before the window.
    @Test func aPressWaitsUntilEveryReadReachesItsArrival() {
        var h = CoreHarness(.fairPanel(windowUs: 2000))
        h.arm("quiz")
        h.skip(5)
        let arrival = Instant(nanoseconds: h.now.nanoseconds - 10_000)
        h.core.readThrough = Instant(nanoseconds: arrival.nanoseconds - 1)
        #expect(h.down("red", 1, arrivedUsAgo: 10) == ["(reply deferred)"])
        #expect(h.core.earliestWaitingArrival == arrival)
        #expect(h.waitNanos(50_000).isEmpty)
        h.core.readThrough = arrival
        #expect(h.waitNanos(1_000) == ["answer s1: GRANTED red fence=1", "PRESSED red u1 s1 fence=1 #2", "FIRED red u1 s1 fence=1 #3"])
        #expect(h.core.earliestWaitingArrival == nil)
        #expect(h.core.rankedBy == (readThrough: 1, window: 0))
    }

    /// A press read already through is ranked by its own command, at once.
    @Test func aPressReadThroughIsAnsweredAtOnce() {
        var h = CoreHarness(.fairPanel(windowUs: 2000))
        h.arm("quiz")
        h.skip(5)
        h.core.readThrough = h.now
        #expect(h.down("red", 1, arrivedUsAgo: 30) == ["GRANTED red fence=1", "PRESSED red u1 s1 fence=1 #2", "FIRED red u1 s1 fence=1 #3"])
    }

    /// Only the presses that arrived by the read-through are ranked, earliest first; a
    /// later one read by then waits for the next.
    @Test func onlyPressesUpToTheReadThroughAreRanked() {
        var h = CoreHarness(.fairPanel(windowUs: 2000))
        h.arm("quiz")
        h.skip(5)
        h.core.readThrough = Instant(nanoseconds: h.now.nanoseconds - 1_000_000)
        h.down("red", 1, arrivedUsAgo: 100)
        h.down("blue", 2, arrivedUsAgo: 300)
        h.down("red", 3, arrivedUsAgo: 0)
        h.core.readThrough = Instant(nanoseconds: h.now.nanoseconds - 50_000)
        #expect(
            h.waitNanos(10_000) == [
                "answer s2: GRANTED blue fence=1", "PRESSED blue u2 s2 fence=1 #2", "FIRED blue u2 s2 fence=1 #3",
                "answer s1: RANKED red rank=2 after_us=200", "BUZZED red u1 s1 rank=2 after_us=200 #4",
            ])
        h.core.readThrough = h.now
        #expect(h.waitNanos(1_000) == ["answer s3: RANKED red rank=3 after_us=300", "BUZZED red u3 s3 rank=3 after_us=300 #5"])
    }

    /// A reactor that never reads through (idle, never asked, or starved) does not hold
    /// a press for ever: the window is the cap, and its deadline stays the core's.
    @Test func theWindowIsTheCapWhenTheReadThroughStaysBehind() {
        var h = CoreHarness(.fairPanel(windowUs: 2000))
        h.arm("quiz")
        h.skip(5)
        h.core.readThrough = Instant(nanoseconds: h.now.nanoseconds - 1_000_000)
        h.down("red", 1, arrivedUsAgo: 0)
        #expect(h.core.nextDeadline == Instant(nanoseconds: h.now.nanoseconds + 2_000_000))
        #expect(h.waitNanos(1_999_999).isEmpty)
        #expect(h.waitNanos(1) == ["answer s1: GRANTED red fence=1", "PRESSED red u1 s1 fence=1 #2", "FIRED red u1 s1 fence=1 #3"])
        #expect(h.core.rankedBy == (readThrough: 0, window: 1))
    }

    /// Once the round has a winner, a press ranked after it waits past the window for a
    /// reactor behind (the window bounds what the winner's GRANTED waits, not a RANKED),
    /// up to `BuzzerRound.rankCapUs`; an earlier arrival read meanwhile takes its place.
    @Test func aRankAfterTheWinnerWaitsForTheReadsUpToTheRankCap() {
        var h = CoreHarness(.fairPanel(windowUs: 2000))
        h.arm("quiz")
        h.skip(5)
        h.core.readThrough = h.now
        #expect(h.down("blue", 1, arrivedUsAgo: 0).first == "GRANTED blue fence=1")
        h.core.readThrough = Instant(nanoseconds: h.now.nanoseconds - 1)
        #expect(h.waitNanos(1_000_000).isEmpty)
        #expect(h.down("red", 2, arrivedUsAgo: 0) == ["(reply deferred)"])
        let cap = BuzzerRound.rankCapUs * 1000
        #expect(h.core.earliestWaitingArrival == h.now)
        #expect(h.waitNanos(5_000_000).isEmpty, "not ranked at the window")
        // A press that arrived 500 us before red's, read late by the other reactor.
        #expect(h.down("red", 3, arrivedUsAgo: 5_500) == ["(reply deferred)"])
        #expect(h.waitNanos(cap - 5_500_000 - 1).isEmpty)
        #expect(h.waitNanos(1) == ["answer s3: RANKED red rank=2 after_us=500", "BUZZED red u3 s3 rank=2 after_us=500 #4"])
        #expect(h.waitNanos(500_000) == ["answer s2: RANKED red rank=3 after_us=1000", "BUZZED red u2 s2 rank=3 after_us=1000 #5"])
        #expect(h.core.rankedBy == (readThrough: 1, window: 2))
    }

    /// Without read-through, and with a window of 0, a rank waits no longer than the
    /// window.
    @Test func withoutReadThroughARankWaitsOnlyTheWindow() {
        var h = CoreHarness(.fairPanel(windowUs: 2000))
        h.arm("quiz")
        h.skip(5)
        #expect(h.down("blue", 1, arrivedUsAgo: 2_000).first == "GRANTED blue fence=1")
        #expect(h.down("red", 2, arrivedUsAgo: 0) == ["(reply deferred)"])
        #expect(h.core.nextDeadline == Instant(nanoseconds: h.now.nanoseconds + 2_000_000))
        var zero = CoreHarness(.fairPanel(windowUs: 0))
        zero.arm("quiz")
        zero.skip(5)
        zero.core.readThrough = Instant(nanoseconds: zero.now.nanoseconds - 1_000_000)
        #expect(zero.down("blue", 1, arrivedUsAgo: 0).first == "GRANTED blue fence=1")
        #expect(zero.down("red", 2, arrivedUsAgo: 0).first == "RANKED red rank=2 after_us=0")
    }
}
