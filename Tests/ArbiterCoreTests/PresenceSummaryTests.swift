import Testing

@testable import ArbiterCore

/// Presence above `presenceSummaryAbove` members: counts in one PRESENCE per tick, the
/// joiner's own JOINED in its snapshot, names again once the panel is small.
@Suite struct PresenceSummaryTests {
    func harness(above: Int) -> CoreHarness {
        var config = PanelConfig.demo
        config.presenceSummaryAbove = above
        return CoreHarness(config)
    }

    @Test func upToTheThresholdJoinsAndLeavesAreNamed() {
        var h = harness(above: 2)
        #expect(h.send(.join, 1) == ["OK JOIN members=1 fence=0 seq=0", "JOINED u1 s1 #1"])
        #expect(h.send(.join, 2) == ["OK JOIN members=2 fence=0 seq=1", "JOINED u2 s2 #2"])
        #expect(h.leave(2) == ["OK LEAVE", "LEFT u2 s2 #3"])
        #expect(h.core.nextDeadline == nil)
    }

    @Test func aboveItTheJoinerIsToldAloneAndTheOthersCountItAtTheTick() {
        var h = harness(above: 2)
        h.send(.join, 1)
        h.send(.join, 2)
        // The third member: its snapshot names it, no event takes a seq.
        #expect(h.send(.join, 3) == ["OK JOIN members=3 fence=0 seq=2 joiner=u3"])
        #expect(h.core.nextDeadline == h.now + PresenceTally.tickMs)
        #expect(h.wait(PresenceTally.tickMs - 1) == [])
        #expect(h.wait(1) == ["PRESENCE members=3 joined=1 left=0 #3"])
        #expect(h.core.nextDeadline == nil)
        // A JOIN again by a member: the snapshot, nothing counted.
        #expect(h.send(.join, 3) == ["OK JOIN members=3 fence=0 seq=3"])
        #expect(h.core.nextDeadline == nil)
    }

    @Test func churnWithinATickIsOneLine() {
        var h = harness(above: 2)
        h.send(.join, 1)
        h.send(.join, 2)
        for round in 0..<50 {
            let session = 10 + round
            #expect(h.send(.join, session).count == 1)
            #expect(h.leave(session) == ["OK LEAVE"])
        }
        #expect(h.runTimers(for: 1_000) == ["PRESENCE members=2 joined=50 left=50 #3"])
    }

    @Test func aMassDisconnectIsCountedDownToTheThresholdThenNamed() {
        var h = harness(above: 3)
        for s in 1...3 { h.send(.join, s) }
        for s in 4...100 { h.send(.join, s) }
        h.runTimers(for: 200)
        h.log = []
        // From 100 members down to 3: the leaves that left 3 or more are counted; the
        // ones below are named.
        for s in stride(from: 100, through: 1, by: -1) { h.disconnect(s) }
        let named = h.log.filter { $0.hasPrefix("LEFT") }
        #expect(named == ["LEFT u3 s3 #5", "LEFT u2 s2 #6", "LEFT u1 s1 #7"])
        #expect(h.runTimers(for: 200) == ["PRESENCE members=0 joined=0 left=97 #8"])
    }

    @Test func aSummaryComesAtMostOncePerTick() {
        var h = harness(above: 0)
        var lines: [String] = []
        // A change every 10 ms for a second: ten summaries, each at least a tick apart.
        for i in 1...100 {
            h.send(.join, i)
            lines += h.runTimers(for: 10)
        }
        #expect(lines.count == 10)
        #expect(lines.allSatisfy { $0.hasPrefix("PRESENCE") })
    }

    @Test func summariesLeaveTheHoldTimersAlone() {
        var h = harness(above: 0)
        h.send(.join, 1)
        h.down("sos", 1)
        let lines = h.runTimers(for: 3_000)
        #expect(lines.filter { $0.hasPrefix("FIRED sos") }.count == 1)
        #expect(lines.filter { $0.hasPrefix("PRESENCE") } == ["PRESENCE members=1 joined=1 left=0 #3"])
    }
}
