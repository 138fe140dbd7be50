import Testing
@testable import ArbiterCore

@Suite("tap: the exclusive button")
struct TapButtonTests {
    @Test func grantFiresAtTouchDown() {
        var h = CoreHarness()
        #expect(h.down("b1", 1) == ["GRANTED b1 fence=1", "PRESSED b1 u1 s1 fence=1 #1", "FIRED b1 u1 s1 fence=1 #2"])
    }

    /// Seed report "exclusive buttons": pressing two at once lit up both, because the
    /// decision happened at touch-up and the lock was reset on a timer.
    @Test func regressionTwoButtonsLitAtOnce() {
        var h = CoreHarness()
        let first = h.down("b1", 1)
        let second = h.down("b2", 2)  // same instant, same group
        #expect(first.first == "GRANTED b1 fence=1")
        #expect(second == ["DENIED b2 busy owner=u1 active=b1"])
        let snap = h.core.snapshot(at: h.now)
        #expect(snap.buttons.filter { $0.state == .pressed }.count == 1)
        #expect(snap.buttons[1].state == .locked)
        #expect(snap.buttons[1].owner == "u1")
    }

    @Test func ownerCannotLightASecondButtonOfItsGroup() {
        var h = CoreHarness()
        h.down("b1", 1)
        #expect(h.down("b2", 1) == ["DENIED b2 busy owner=u1 active=b1"])
        #expect(h.down("b3", 1) == ["DENIED b3 busy owner=u1 active=b1"])
    }

    @Test func otherGroupsStayFree() {
        var h = CoreHarness()
        h.down("b1", 1)
        #expect(h.down("sos", 2).first == "GRANTED sos fence=2")
        #expect(h.down("talk", 3).first == "GRANTED talk fence=3")
    }

    @Test func repeatedDownIsIdempotent() {
        var h = CoreHarness()
        h.down("b1", 1)
        #expect(h.down("b1", 1) == ["GRANTED b1 fence=1"])
        #expect(h.core.seq == 2)
        #expect(h.core.lastFence == 1)
    }

    @Test func upReleasesAndTheGroupIsFreeAgain() {
        var h = CoreHarness()
        h.down("b1", 1)
        #expect(h.up("b1", 1) == ["OK UP b1", "RELEASED b1 up u1 fence=1 #3"])
        #expect(h.down("b2", 2).first == "GRANTED b2 fence=2")
    }

    @Test func cancelReleasesWithoutAction() {
        var h = CoreHarness()
        h.down("b1", 1)
        #expect(h.cancel("b1", 1) == ["OK CANCEL b1", "RELEASED b1 cancel u1 fence=1 #3"])
    }

    @Test func timeoutReleases() {
        var h = CoreHarness(.testPanel(tapTimeout: 500))
        h.down("b1", 1)
        #expect(h.core.nextDeadline == h.now + 500)
        #expect(h.wait(499).isEmpty)
        #expect(h.wait(1) == ["RELEASED b1 timeout u1 fence=1 #3"])
        // Lifting the finger after the timeout is normal, not an error.
        #expect(h.up("b1", 1) == ["OK UP b1 ended=timeout"])
    }

    @Test func lateTickStillTimesOutBeforeTheNextDown() {
        var h = CoreHarness(.testPanel(tapTimeout: 500))
        h.down("b1", 1)
        h.skip(600)
        #expect(
            h.down("b2", 2) == [
                "RELEASED b1 timeout u1 fence=1 #3", "GRANTED b2 fence=2",
                "PRESSED b2 u2 s2 fence=2 #4", "FIRED b2 u2 s2 fence=2 #5",
            ])
    }

    @Test func zeroTimeoutMeansNone() {
        var h = CoreHarness(.testPanel(tapTimeout: 0))
        h.down("b1", 1)
        #expect(h.core.nextDeadline == nil)
        #expect(h.wait(10_000_000).isEmpty)
    }

    @Test func fencesStrictlyIncrease() {
        var h = CoreHarness(lastFence: 41)
        h.down("b1", 1)
        h.up("b1", 1)
        h.down("b2", 2)
        #expect(h.log.contains("GRANTED b1 fence=42"))
        #expect(h.log.contains("GRANTED b2 fence=43"))
    }

    @Test func unknownButton() {
        var h = CoreHarness()
        #expect(h.down("nope", 1) == ["ERROR no-such-button"])
        #expect(h.up("nope", 1) == ["ERROR no-such-button"])
    }
}
