import Testing
@testable import ArbiterCore

extension PanelConfig {
    /// `q`: a queue group of two taps and a hold; `quiz`: a buzzer group of two taps.
    static func fairPanel(
        maxQueue: Int = 3, lockoutMs: Int64 = 250, announce: Int = GroupPolicy.defaultAnnounce, holdMs: Int64 = 1000, tapTimeout: Int64 = 10_000,
        windowUs: Int64 = 0
    ) -> PanelConfig {
        PanelConfig(
            id: "f",
            buttons: [
                ButtonConfig(id: "a", kind: .tap, group: "q", timeoutMs: tapTimeout),
                ButtonConfig(id: "b", kind: .tap, group: "q", timeoutMs: tapTimeout),
                ButtonConfig(id: "h", kind: .hold, group: "q", holdMs: holdMs, progressMs: 0),
                ButtonConfig(id: "red", kind: .tap, group: "quiz"),
                ButtonConfig(id: "blue", kind: .tap, group: "quiz"),
                ButtonConfig(id: "x", kind: .tap, group: "plain"),
            ], groups: ["q": .queue(maxQueue: maxQueue), "quiz": .buzzer(earlyLockoutMs: lockoutMs, announce: announce, decisionWindowUs: windowUs)])
    }
}

@Suite("queue groups: first come, first served")
struct QueueGroupTests {
    @Test func busyDownWaitsInLineAndMembersSeeIt() {
        var h = CoreHarness(.fairPanel())
        h.down("a", 1)
        #expect(h.down("b", 2) == ["QUEUED b position=1 owner=u1", "QUEUED b u2 s2 position=1 #3"])
        #expect(h.down("a", 3) == ["QUEUED a position=2 owner=u1", "QUEUED a u3 s3 position=2 #4"])
        let snap = h.core.snapshot(at: h.now)
        #expect(snap.groups.first?.waiting.map(\.name) == ["u2", "u3"])
        #expect(snap.groups.first?.waiting.map(\.position) == [1, 2])
    }

    @Test func releaseHandsTheGroupToTheHeadAtOnceWithItsOwnFence() {
        var h = CoreHarness(.fairPanel())
        h.down("a", 1)
        h.down("b", 2)
        h.down("a", 3)
        #expect(
            h.up("a", 1) == [
                "OK UP a", "RELEASED a up u1 fence=1 #5",
                "to s2: GRANTED b fence=2", "PRESSED b u2 s2 fence=2 #6", "FIRED b u2 s2 fence=2 #7",
            ])
        #expect(h.core.snapshot(at: h.now).groups.first?.waiting.map(\.name) == ["u3"])
        #expect(
            h.cancel("b", 2).suffix(4) == [
                "RELEASED b cancel u2 fence=2 #8", "to s3: GRANTED a fence=3", "PRESSED a u3 s3 fence=3 #9", "FIRED a u3 s3 fence=3 #10",
            ])
    }

    @Test func handOffWhenTheOwnersHoldFires() {
        var h = CoreHarness(.fairPanel(holdMs: 1000))
        h.down("h", 1)
        h.wait(100)
        h.down("h", 2)
        let lines = h.runTimers(for: 900)
        #expect(
            lines.suffix(5) == [
                "PROGRESS h 1000 #4", "FIRED h u1 s1 fence=1 #5", "RELEASED h fired u1 fence=1 #6",
                "to s2: GRANTED h fence=2", "PRESSED h u2 s2 fence=2 #7",
            ])
        // Its hold_ms runs from the hand-off, not from its DOWN.
        #expect(h.core.nextDeadline == h.now + 500)
        #expect(h.runTimers(for: 999).filter { $0.hasPrefix("FIRED") }.isEmpty)
        #expect(h.runTimers(for: 1).contains("FIRED h u2 s2 fence=2 #10"))
    }

    @Test func handOffWhenTheOwnersTapTimesOut() {
        var h = CoreHarness(.fairPanel(tapTimeout: 500))
        h.down("a", 1)
        h.down("b", 2)
        #expect(h.wait(500) == ["RELEASED a timeout u1 fence=1 #4", "to s2: GRANTED b fence=2", "PRESSED b u2 s2 fence=2 #5", "FIRED b u2 s2 fence=2 #6"])
        #expect(h.core.nextDeadline == h.now + 500)
    }

    @Test func theHeadDisconnectingLeavesTheLineAndTheNextMovesUp() {
        var h = CoreHarness(.fairPanel())
        h.down("a", 1)
        h.down("b", 2)
        h.down("b", 3)
        #expect(h.disconnect(2) == ["DEQUEUED b u2 s2 position=1 disconnect #5"])
        #expect(h.core.snapshot(at: h.now).groups[0].waiting.map(\.position) == [1])
        #expect(h.up("a", 1).suffix(3) == ["to s3: GRANTED b fence=2", "PRESSED b u3 s3 fence=2 #7", "FIRED b u3 s3 fence=2 #8"])
    }

    @Test func theOwnerDisconnectingHandsOn() {
        var h = CoreHarness(.fairPanel())
        h.down("a", 1)
        h.down("b", 2)
        #expect(
            h.disconnect(1) == ["RELEASED a disconnect u1 fence=1 #4", "to s2: GRANTED b fence=2", "PRESSED b u2 s2 fence=2 #5", "FIRED b u2 s2 fence=2 #6"])
    }

    @Test func upCancelAndLeaveOfAWaiterDequeueWithTheirReason() {
        var h = CoreHarness(.fairPanel())
        h.down("a", 1)
        h.down("b", 2)
        h.down("b", 3)
        h.down("a", 4)
        #expect(h.up("b", 3) == ["OK UP b", "DEQUEUED b u3 s3 position=2 up #6"])
        #expect(h.cancel("b", 2) == ["OK CANCEL b", "DEQUEUED b u2 s2 position=1 cancel #7"])
        #expect(h.leave(4) == ["OK LEAVE", "DEQUEUED a u4 s4 position=1 leave #8"])
        #expect(h.core.snapshot(at: h.now).groups[0].waiting.isEmpty)
        #expect(h.up("a", 1) == ["OK UP a", "RELEASED a up u1 fence=1 #9"])
    }

    @Test func aWaitersLateUpWithAnOldFenceDoesNotTakeItOutOfLine() {
        var h = CoreHarness(.fairPanel())
        h.down("a", 2)
        h.up("a", 2)
        h.down("a", 1)
        h.down("a", 2)
        #expect(h.up("a", 2, fence: 1) == ["ERROR stale-fence"])
        #expect(h.core.snapshot(at: h.now).groups[0].waiting.map(\.name) == ["u2"])
    }

    @Test func aFullQueueIsDenied() {
        var h = CoreHarness(.fairPanel(maxQueue: 2))
        h.down("a", 1)
        h.down("a", 2)
        h.down("a", 3)
        #expect(h.down("a", 4) == ["DENIED a queue-full"])
    }

    @Test func retriesKeepTheirPlaceAndTheOwnerIsNotQueuedBehindItself() {
        var h = CoreHarness(.fairPanel())
        h.down("a", 1)
        h.down("a", 2)
        #expect(h.down("a", 2) == ["QUEUED a position=1 owner=u1"])
        #expect(h.down("b", 2) == ["DENIED b busy owner=u1 active=a"])
        #expect(h.down("b", 1) == ["DENIED b busy owner=u1 active=a"])
        #expect(h.down("a", 1) == ["GRANTED a fence=1"])
    }

    @Test func resetEmptiesTheLineAndHandsNothingOn() {
        var h = CoreHarness(.fairPanel())
        h.down("a", 1)
        h.down("a", 2)
        h.down("b", 3)
        #expect(
            h.send(.reset, 9) == [
                "OK RESET", "DEQUEUED b u3 s3 position=2 reset #5", "DEQUEUED a u2 s2 position=1 reset #6", "RELEASED a reset u1 fence=1 #7",
            ])
        #expect(h.core.grants.allSatisfy { $0 == nil })
    }

    @Test func aGroupNotDescribedIsStillExclusive() {
        var h = CoreHarness(.fairPanel())
        h.down("x", 1)
        #expect(h.down("x", 2) == ["DENIED x busy owner=u1 active=x"])
        #expect(h.core.snapshot(at: h.now).groups.map(\.group) == ["q", "quiz"])
        #expect(CoreHarness().core.snapshot(at: h.now).groups.isEmpty)
    }
}

@Suite("queue groups: hand-offs only with durable fences")
struct QueueFenceLimitTests {
    /// The journal could not reserve more fences: the head waits instead of taking a
    /// fence that is not durable, and is granted on the first call once one is.
    @Test func aHandOffWaitsForAFenceAndThenGoesAhead() {
        var h = CoreHarness(.fairPanel())
        h.down("a", 1)
        h.down("b", 2)
        h.core.fenceLimit = 1
        #expect(h.up("a", 1) == ["OK UP a", "RELEASED a up u1 fence=1 #4"])
        #expect(h.core.snapshot(at: h.now).groups[0].waiting.map(\.name) == ["u2"])
        h.core.fenceLimit = 1000
        #expect(h.wait(0) == ["to s2: GRANTED b fence=2", "PRESSED b u2 s2 fence=2 #5", "FIRED b u2 s2 fence=2 #6"])
    }
}
