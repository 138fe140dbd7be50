import Testing
@testable import ArbiterCore

@Suite("UP/CANCEL checks: fence, own ended grant, not owner")
struct ReleaseRuleTests {
    @Test func staleFenceNeverEndsANewerPress() {
        var h = CoreHarness()
        h.down("b1", 1)
        h.up("b1", 1)
        h.down("b1", 1)  // fence 2
        #expect(h.up("b1", 1, fence: 1) == ["ERROR stale-fence"])
        #expect(h.core.snapshot(at: h.now).buttons[0].state == .pressed)
        #expect(h.up("b1", 1, fence: 2).first == "OK UP b1")
    }

    @Test func staleFenceIsCheckedBeforeOwnership() {
        var h = CoreHarness()
        h.down("b1", 1)
        #expect(h.up("b1", 2, fence: 99) == ["ERROR stale-fence"])
        #expect(h.up("b1", 2, fence: 1) == ["ERROR not-owner"])
        #expect(h.up("b1", 2) == ["ERROR not-owner"])
    }

    @Test func fenceOfOwnEndedGrantIsOk() {
        var h = CoreHarness(.testPanel(tapTimeout: 100))
        h.down("b1", 1)
        h.runTimers(for: 100)
        #expect(h.up("b1", 1, fence: 1) == ["OK UP b1 ended=timeout"])
        #expect(h.cancel("b1", 1) == ["ERROR not-owner"])
    }

    /// `ended=` answers the first release of an ended grant, as `OK UP` answers the first
    /// of one's own; every later one is `not-owner` (or `stale-fence` with its fence),
    /// whatever ended the grant.
    @Test func anEndedGrantIsAnsweredOnce() {
        var h = CoreHarness(.testPanel(tapTimeout: 100))
        h.down("b1", 1)
        h.send(.reset, 9)
        #expect(h.up("b1", 1) == ["OK UP b1 ended=reset"])
        #expect(h.up("b1", 1) == ["ERROR not-owner"])
        #expect(h.cancel("b1", 1) == ["ERROR not-owner"])
        #expect(h.up("b1", 1, fence: 1) == ["ERROR stale-fence"])
        // With its fence first, then without.
        h.down("b1", 1)  // fence 2
        h.runTimers(for: 100)
        #expect(h.cancel("b1", 1, fence: 2) == ["OK CANCEL b1 ended=timeout"])
        #expect(h.up("b1", 1) == ["ERROR not-owner"])
        // Each grant that ends has its own one answer.
        h.down("b1", 1)  // fence 3
        h.send(.reset, 9)
        #expect(h.up("b1", 1) == ["OK UP b1 ended=reset"])
        #expect(h.up("b1", 1) == ["ERROR not-owner"])
        // Only the session's own answer goes: another session's ended grant stays.
        h.down("b1", 1)  // fence 4
        h.down("b2", 2)  // busy
        h.runTimers(for: 100)
        h.down("b2", 2)  // fence 5
        h.send(.reset, 9)
        #expect(h.up("b2", 2) == ["OK UP b2 ended=reset"])
        #expect(h.up("b1", 1) == ["OK UP b1 ended=timeout"])
    }

    @Test func endedGrantOfSomeoneElseIsNotOwner() {
        var h = CoreHarness(.testPanel(tapTimeout: 100))
        h.down("b1", 1)
        h.runTimers(for: 100)
        #expect(h.up("b1", 2) == ["ERROR not-owner"])
    }

    @Test func releaseOfANeverHeldButton() {
        var h = CoreHarness()
        #expect(h.up("b1", 1) == ["ERROR not-owner"])
        #expect(h.up("b1", 1, fence: 3) == ["ERROR stale-fence"])
    }

    @Test func resetIsForAdminsAndReleasesEverything() {
        var h = CoreHarness()
        h.down("b1", 1)
        h.down("talk", 2)
        h.runTimers(for: 400)
        #expect(h.send(.reset, 3, access: .press) == ["ERROR forbidden"])
        #expect(
            h.send(.reset, 3) == [
                "OK RESET", "RELEASED b1 reset u1 fence=1 #5", "CANCELLED talk u2 s2 fence=2 #6",
                "RELEASED talk reset u2 fence=2 #7",
            ])
        #expect(h.up("b1", 1) == ["OK UP b1 ended=reset"])
    }

    @Test func shutdownReleasesEverything() {
        var h = CoreHarness()
        h.down("sos", 1)
        var out = PanelOutput()
        h.core.shutdown(now: h.now, into: &out)
        #expect(out.events.map { h.render($0) } == ["RELEASED sos shutdown u1 fence=1 #2"])
    }

    @Test func accessLevels() {
        var h = CoreHarness()
        #expect(h.down("b1", 1, access: .view) == ["DENIED b1 forbidden"])
        #expect(h.up("b1", 1, access: .view) == ["ERROR forbidden"])
        #expect(h.send(.join, 1, access: .none) == ["ERROR forbidden"])
        #expect(h.send(.join, 1, access: .view).first == "OK JOIN members=1 fence=0 seq=0")
    }

    @Test func disconnectReleasesEverythingItOwnedAndForgetsIt() {
        var h = CoreHarness()
        h.send(.join, 1)
        h.down("b1", 1)
        h.down("sos", 1)
        #expect(
            h.disconnect(1) == [
                "RELEASED b1 disconnect u1 fence=1 #5", "RELEASED sos disconnect u1 fence=2 #6", "LEFT u1 s1 #7",
            ])
        #expect(h.core.memberCount == 0)
        #expect(h.up("b1", 1) == ["ERROR not-owner"])
    }
}
