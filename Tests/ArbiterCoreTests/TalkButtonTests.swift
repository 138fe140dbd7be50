import Testing
@testable import ArbiterCore

@Suite("talk: press-to-talk")
struct TalkButtonTests {
    @Test func quickTapIsTapped() {
        var h = CoreHarness()
        h.down("talk", 1)
        h.runTimers(for: 200)
        #expect(h.up("talk", 1) == ["OK UP talk", "TAPPED talk u1 s1 fence=1 #2", "RELEASED talk up u1 fence=1 #3"])
    }

    @Test func startsOnceAtLongMs() {
        var h = CoreHarness()
        h.down("talk", 1)
        #expect(h.runTimers(for: 349).isEmpty)
        #expect(h.runTimers(for: 1) == ["STARTED talk u1 s1 fence=1 #2"])
        #expect(h.runTimers(for: 30_000).isEmpty)
    }

    /// Seed report "press-to-talk": the recognizer ended at its minimum duration with
    /// the finger still down, so every talk stopped itself a third of a second in.
    @Test func regressionStopBeforeTheFingerLifted() {
        var h = CoreHarness()
        h.down("talk", 1)
        h.runTimers(for: 10_000)
        #expect(!h.log.contains { $0.hasPrefix("STOPPED") || $0.hasPrefix("RELEASED") })
        #expect(
            h.up("talk", 1) == [
                "OK UP talk", "STOPPED talk u1 s1 fence=1 held=9650 discarded=false up #3",
                "RELEASED talk up u1 fence=1 #4",
            ])
    }

    @Test func shortTalkIsDiscarded() {
        var h = CoreHarness()
        h.down("talk", 1)
        h.runTimers(for: 350 + 299)
        #expect(h.up("talk", 1)[1] == "STOPPED talk u1 s1 fence=1 held=299 discarded=true up #3")
        h.down("talk", 1)
        h.runTimers(for: 350 + 300)
        #expect(h.up("talk", 1)[1] == "STOPPED talk u1 s1 fence=2 held=300 discarded=false up #7")
    }

    @Test func lateStartTickStillStartsBeforeTheStop() {
        var h = CoreHarness()
        h.down("talk", 1)
        h.skip(1000)
        #expect(
            h.up("talk", 1) == [
                "STARTED talk u1 s1 fence=1 #2", "OK UP talk",
                "STOPPED talk u1 s1 fence=1 held=650 discarded=false up #3", "RELEASED talk up u1 fence=1 #4",
            ])
    }

    @Test func cancelAfterStartIsCancelled() {
        var h = CoreHarness()
        h.down("talk", 1)
        h.runTimers(for: 500)
        #expect(h.cancel("talk", 1) == ["OK CANCEL talk", "CANCELLED talk u1 s1 fence=1 #3", "RELEASED talk cancel u1 fence=1 #4"])
    }

    @Test func cancelBeforeStartIsJustReleased() {
        var h = CoreHarness()
        h.down("talk", 1)
        #expect(h.cancel("talk", 1) == ["OK CANCEL talk", "RELEASED talk cancel u1 fence=1 #2"])
    }

    @Test func disconnectAfterStartIsCancelled() {
        var h = CoreHarness()
        h.send(.join, 2)
        h.down("talk", 1)
        h.runTimers(for: 400)
        #expect(h.disconnect(1) == ["CANCELLED talk u1 s1 fence=1 #4", "RELEASED talk disconnect u1 fence=1 #5"])
    }

    @Test func timeoutStopsAfterTimeoutMsOfTalking() {
        var h = CoreHarness(.testPanel(talkTimeout: 5000))
        h.down("talk", 1)
        let lines = h.runTimers(for: 350 + 5000)
        #expect(
            lines == [
                "STARTED talk u1 s1 fence=1 #2", "STOPPED talk u1 s1 fence=1 held=5000 discarded=false timeout #3",
                "RELEASED talk timeout u1 fence=1 #4",
            ])
        #expect(h.up("talk", 1) == ["OK UP talk ended=timeout"])
    }

    @Test func talkNeverFires() {
        var h = CoreHarness()
        for _ in 0..<3 {
            h.down("talk", 1)
            h.runTimers(for: 1000)
            h.up("talk", 1)
        }
        #expect(!h.log.contains { $0.hasPrefix("FIRED") })
    }
}
