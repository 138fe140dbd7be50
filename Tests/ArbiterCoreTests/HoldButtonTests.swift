import Testing
@testable import ArbiterCore

@Suite("hold: the emergency button")
struct HoldButtonTests {
    @Test func progressMidwayThenCompletionInOrder() {
        var h = CoreHarness(.testPanel(holdMs: 1000, progressMs: 250))
        #expect(h.down("sos", 1) == ["GRANTED sos fence=1", "PRESSED sos u1 s1 fence=1 #1"])
        let lines = h.runTimers(for: 1000)
        #expect(
            lines == [
                "PROGRESS sos 250 #2",
                "MIDWAY sos #3", "PROGRESS sos 500 #4",
                "PROGRESS sos 750 #5",
                "PROGRESS sos 1000 #6", "FIRED sos u1 s1 fence=1 #7", "RELEASED sos fired u1 fence=1 #8",
            ])
    }

    @Test func defaultHoldSendsThirtyStepsAndFiresOnceAtThreeSeconds() {
        var h = CoreHarness()
        h.down("sos", 1)
        let lines = h.runTimers(for: 5000)
        #expect(lines.filter { $0.hasPrefix("PROGRESS") }.count == 30)
        #expect(lines.filter { $0.hasPrefix("FIRED") }.count == 1)
        #expect(lines.filter { $0.hasPrefix("MIDWAY") }.count == 1)
        let midway = lines.firstIndex { $0.hasPrefix("MIDWAY") }!
        let half = lines.firstIndex { $0.hasPrefix("PROGRESS sos 500") }!
        #expect(midway < half)
        #expect(h.core.snapshot(at: h.now).buttons[3].state == .idle)
    }

    @Test func earlyUpNeverFires() {
        var h = CoreHarness()
        h.down("sos", 1)
        h.runTimers(for: 2999)
        #expect(h.up("sos", 1).suffix(1) == ["RELEASED sos up u1 fence=1 #32"])
        #expect(!h.log.contains { $0.hasPrefix("FIRED") || $0.hasPrefix("PROGRESS sos 1000") })
        #expect(h.runTimers(for: 10_000).isEmpty)
    }

    @Test func upAfterFiringIsNormal() {
        var h = CoreHarness()
        h.down("sos", 1)
        h.runTimers(for: 3000)
        #expect(h.up("sos", 1) == ["OK UP sos ended=fired"])
        // Answered once: the fence no longer names anything.
        #expect(h.up("sos", 1, fence: 1) == ["ERROR stale-fence"])
    }

    /// Seed report "emergency button": the ring was full but the action did not fire,
    /// because the ring and the firing came from two different sources. Here an UP that
    /// arrives when the hold has lasted hold_ms fires even though no tick has run.
    @Test func regressionFullRingThatDidNotFire() {
        var h = CoreHarness()
        h.down("sos", 1)
        h.runTimers(for: 2900)
        h.skip(100)  // the 3000 ms tick is late
        #expect(
            h.up("sos", 1) == [
                "OK UP sos", "PROGRESS sos 1000 #32", "FIRED sos u1 s1 fence=1 #33", "RELEASED sos fired u1 fence=1 #34",
            ])
        // Every 1.000 is immediately followed by FIRED then RELEASED fired.
        for (i, line) in h.log.enumerated() where line.hasPrefix("PROGRESS sos 1000") {
            #expect(h.log[i + 1].hasPrefix("FIRED sos"))
            #expect(h.log[i + 2].hasPrefix("RELEASED sos fired"))
        }
    }

    @Test func lateUpWithoutAnyTickStillFiresOnceWithMidway() {
        var h = CoreHarness()
        h.down("sos", 1)
        h.skip(5000)
        #expect(
            h.up("sos", 1) == [
                "OK UP sos", "MIDWAY sos #2", "PROGRESS sos 1000 #3", "FIRED sos u1 s1 fence=1 #4",
                "RELEASED sos fired u1 fence=1 #5",
            ])
    }

    @Test func cancelAfterHoldMsAlsoFiresBecauseTheHoldCompletedFirst() {
        var h = CoreHarness()
        h.down("sos", 1)
        h.skip(3000)
        #expect(h.cancel("sos", 1).prefix(3) == ["OK CANCEL sos", "MIDWAY sos #2", "PROGRESS sos 1000 #3"])
    }

    @Test func everyFullRingFiresExactlyOnce() {
        var h = CoreHarness()
        for round in 0..<5 {
            h.down("sos", 1)
            h.runTimers(for: 3000)
            h.up("sos", 1)
            #expect(h.log.filter { $0.hasPrefix("FIRED") }.count == round + 1)
        }
    }

    @Test func lateTickGivesOneTrueProgressNotABurst() {
        var h = CoreHarness()
        h.down("sos", 1)
        h.skip(1234)
        #expect(h.wait(0) == ["PROGRESS sos 411 #2"])
        #expect(h.core.nextDeadline == Instant(milliseconds: 1000 + 1300))
    }

    @Test func midwayPrecedesHalfEvenWithOddHoldAndCoarseTicks() {
        var h = CoreHarness(.testPanel(holdMs: 3001, progressMs: 700))
        h.down("sos", 1)
        let lines = h.runTimers(for: 3001)
        // Ticks at 700, 1400, 2100 ms; half is 1500 ms: MIDWAY has its own deadline there.
        #expect(lines.prefix(4) == ["PROGRESS sos 233 #2", "PROGRESS sos 466 #3", "MIDWAY sos #4", "PROGRESS sos 699 #5"])
    }

    @Test func chatterWhileHoldingDoesNotCancel() {
        var h = CoreHarness()
        h.down("sos", 1)
        h.runTimers(for: 1000)
        h.down("sos", 1)
        h.down("b1", 1)
        h.send(.join, 1)
        #expect(h.up("b2", 1) == ["ERROR not-owner"])
        let lines = h.runTimers(for: 2000)
        #expect(lines.contains("FIRED sos u1 s1 fence=1 #25") || lines.contains { $0.hasPrefix("FIRED sos") })
    }

    @Test func disconnectBeforeCompletionReleasesWithoutFiring() {
        var h = CoreHarness()
        h.down("sos", 1)
        h.runTimers(for: 1000)
        #expect(h.disconnect(1) == ["RELEASED sos disconnect u1 fence=1 #12"])
        #expect(h.runTimers(for: 5000).isEmpty)
    }

    @Test func snapshotShowsProgressButNeverAFullRing() {
        var h = CoreHarness()
        h.down("sos", 1)
        h.runTimers(for: 1500)
        #expect(h.core.snapshot(at: h.now).buttons[3].permille == 500)
    }
}
