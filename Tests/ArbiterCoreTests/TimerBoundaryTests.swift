import Testing
@testable import ArbiterCore

/// "Must stay held for hold_ms" means at least hold_ms after the DOWN arrived, never
/// before: the core keeps nanoseconds, so a press that arrived part-way through a
/// millisecond is not rounded down to its start (issue 9, section 5).
@Suite("timers: never early")
struct TimerBoundaryTests {
    /// A press time that is not a whole millisecond.
    static let pressAt = Instant(nanoseconds: 1_000_000_000 + 999_999)

    static func harness(_ config: PanelConfig) -> CoreHarness {
        var h = CoreHarness(config)
        h.now = pressAt
        return h
    }

    @Test func holdFiresAtExactlyHoldMsNotOneNanosecondBefore() {
        var h = Self.harness(.testPanel(holdMs: 300, progressMs: 0))
        h.down("sos", 1)
        #expect(h.core.nextDeadline == Self.pressAt + 150)
        h.wait(150)  // MIDWAY
        #expect(h.core.nextDeadline == Self.pressAt + 300)
        #expect(h.waitNanos(150 * 1_000_000 - 1).isEmpty)
        #expect(h.waitNanos(1) == ["PROGRESS sos 1000 #3", "FIRED sos u1 s1 fence=1 #4", "RELEASED sos fired u1 fence=1 #5"])
    }

    @Test func upOneNanosecondBeforeHoldMsDoesNotFire() {
        var h = Self.harness(.testPanel(holdMs: 3000, progressMs: 0))
        h.down("sos", 1)
        h.now = Instant(nanoseconds: (Self.pressAt + 3000).nanoseconds - 1)
        #expect(h.up("sos", 1).last == "RELEASED sos up u1 fence=1 #3")
        #expect(!h.log.contains { $0.hasPrefix("FIRED") })
    }

    @Test func upAtExactlyHoldMsFires() {
        var h = Self.harness(.testPanel(holdMs: 3000, progressMs: 0))
        h.down("sos", 1)
        h.now = Self.pressAt + 3000
        #expect(
            h.up("sos", 1) == [
                "OK UP sos", "MIDWAY sos #2", "PROGRESS sos 1000 #3", "FIRED sos u1 s1 fence=1 #4",
                "RELEASED sos fired u1 fence=1 #5",
            ])
    }

    @Test func tapTimesOutAtExactlyTimeoutMs() {
        var h = Self.harness(.testPanel(tapTimeout: 500))
        h.down("b1", 1)
        #expect(h.core.nextDeadline == Self.pressAt + 500)
        #expect(h.waitNanos(500 * 1_000_000 - 1).isEmpty)
        #expect(h.waitNanos(1) == ["RELEASED b1 timeout u1 fence=1 #3"])
    }

    @Test func talkStartsAtExactlyLongMs() {
        var h = Self.harness(.testPanel(longMs: 350))
        h.down("talk", 1)
        #expect(h.core.nextDeadline == Self.pressAt + 350)
        #expect(h.waitNanos(350 * 1_000_000 - 1).isEmpty)
        #expect(h.waitNanos(1) == ["STARTED talk u1 s1 fence=1 #2"])
    }

    @Test func talkUpOneNanosecondBeforeLongMsIsATap() {
        var h = Self.harness(.testPanel(longMs: 350))
        h.down("talk", 1)
        h.now = Instant(nanoseconds: (Self.pressAt + 350).nanoseconds - 1)
        #expect(h.up("talk", 1) == ["OK UP talk", "TAPPED talk u1 s1 fence=1 #2", "RELEASED talk up u1 fence=1 #3"])
    }

    @Test func instantArithmeticKeepsNanoseconds() {
        let t = Instant(nanoseconds: 1_500_000)
        #expect((t + 2).nanoseconds == 3_500_000)
        #expect(Instant(nanoseconds: 3_499_999).since(t) == 1)
        #expect(Instant(nanoseconds: 3_500_000).since(t) == 2)
        #expect(Instant(nanoseconds: 0).since(t) == -2)
        #expect(Instant(nanoseconds: 1_537_999).microseconds(since: t) == 37)
        #expect(t.milliseconds == 1)
    }
}
