import Testing
import ArbiterLoadKit

/// Doctored timelines for the observer-free overlap check: grant-read and release-sent
/// times (nanoseconds on the generator's clock) fed in the order one thread would.
@Suite struct OverlapCheckerTests {
    /// Panel 0: b0 in its own group, b1 and b2 sharing one; panel 1: b3.
    static func checker() -> OverlapChecker {
        OverlapChecker(
            labels: ["p b0", "p b1", "p b2", "q b3"], groups: [0, 1, 1, 2], panels: [0, 0, 0, 1],
            groupLabels: ["group g0 of p", "group g1 of p", "group g0 of q"], origin: 0)
    }

    static func rules(_ c: OverlapChecker) -> [SafetyRule] { c.violations.map(\.rule) }

    @Test func anOverlapIsCaughtAndNamesBothConnections() throws {
        let c = Self.checker()
        c.granted(button: 0, by: 1, readAt: 10, fence: 1)
        c.granted(button: 0, by: 2, readAt: 15, fence: 2)
        c.released(button: 0, by: 1, sentAt: 20)
        c.released(button: 0, by: 2, sentAt: 25)
        #expect(Self.rules(c) == [.grantOverlap])
        let v = try #require(c.violations.first)
        #expect(v.message.hasPrefix("c2 read a grant of group g0 of p while c1's grant of it was read"))
        #expect(
            v.evidence == [
                "c1: GRANTED p b0 fence=1 read at 0.000000010 s, no UP sent yet",
                "c2: GRANTED p b0 fence=2 read at 0.000000015 s",
            ])
        #expect(c.grantsChecked == 2 && c.violationCount == 1)
    }

    @Test func backToBackGrantsAreFine() {
        let c = Self.checker()
        c.granted(button: 0, by: 1, readAt: 10, fence: 1)
        c.released(button: 0, by: 1, sentAt: 20)
        c.granted(button: 0, by: 2, readAt: 21, fence: 2)
        c.released(button: 0, by: 2, sentAt: 30)
        c.granted(button: 0, by: 1, readAt: 31, fence: 3)
        c.released(button: 0, by: 1, sentAt: 40)
        #expect(c.violations.isEmpty, "\(c.violations)")
        #expect(c.grantsChecked == 3)
    }

    @Test func equalTimesCountAsOverlap() throws {
        let c = Self.checker()
        c.granted(button: 0, by: 1, readAt: 10, fence: 1)
        c.released(button: 0, by: 1, sentAt: 20)
        c.granted(button: 0, by: 2, readAt: 20, fence: 2)
        #expect(Self.rules(c) == [.grantOverlap])
        #expect(try #require(c.violations.first).message.contains("equal times count as overlap"))
    }

    @Test func aGrantReadBeforeTheReleaseWasSentIsCaught() {
        // The holder's release is recorded first, but its stamp is later than the read.
        let c = Self.checker()
        c.granted(button: 0, by: 1, readAt: 10, fence: 1)
        c.released(button: 0, by: 1, sentAt: 30)
        c.granted(button: 0, by: 2, readAt: 25, fence: 2)
        #expect(Self.rules(c) == [.grantOverlap])
    }

    @Test func groupsNotButtonsAreExclusive() {
        let c = Self.checker()
        // b0 and b1 are in different groups: held together is fine.
        c.granted(button: 0, by: 1, readAt: 10, fence: 1)
        c.granted(button: 1, by: 2, readAt: 11, fence: 2)
        #expect(c.violations.isEmpty)
        // b2 shares b1's group.
        c.granted(button: 2, by: 3, readAt: 12, fence: 3)
        #expect(Self.rules(c) == [.grantOverlap])
    }

    @Test func fencesRiseWithinAGroup() {
        let c = Self.checker()
        c.granted(button: 0, by: 1, readAt: 10, fence: 5)
        c.released(button: 0, by: 1, sentAt: 20)
        c.granted(button: 0, by: 2, readAt: 30, fence: 5)
        #expect(Self.rules(c) == [.grantFence])
    }

    @Test func aDownSentAfterAGrantWasReadGetsAHigherFence() {
        let c = Self.checker()
        #expect(c.fenceFloor(panel: 0) == -1)
        c.granted(button: 0, by: 1, readAt: 10, fence: 7)
        let floor = c.fenceFloor(panel: 0)
        #expect(floor == 7)
        // Another group of the same panel, its DOWN sent after fence 7 was read.
        c.granted(button: 1, by: 2, readAt: 12, fence: 8, floor: floor)
        #expect(c.violations.isEmpty)
        c.released(button: 1, by: 2, sentAt: 13)
        c.granted(button: 1, by: 3, readAt: 14, fence: 6, floor: floor)
        #expect(Self.rules(c) == [.grantFence, .grantFence], "below the floor, and below the group's previous fence")
        // Fences are per panel: panel q starts from nothing.
        #expect(c.fenceFloor(panel: 1) == -1)
        c.granted(button: 3, by: 4, readAt: 15, fence: 1, floor: c.fenceFloor(panel: 1))
        #expect(c.violationCount == 2)
    }

    @Test func aRefusedReleaseKeepsTheGrant() {
        let c = Self.checker()
        c.granted(button: 0, by: 1, readAt: 10, fence: 1)
        c.released(button: 0, by: 1, sentAt: 20)
        c.releaseRefused(button: 0, by: 1, readAt: 25, fence: 1)
        c.released(button: 0, by: 1, sentAt: 30)
        c.granted(button: 0, by: 2, readAt: 35, fence: 2)
        #expect(c.violations.isEmpty, "\(c.violations)")
        // The same, but someone was granted while the refused release left the grant live.
        c.released(button: 0, by: 2, sentAt: 40)
        c.granted(button: 0, by: 3, readAt: 45, fence: 3)
        c.releaseRefused(button: 0, by: 2, readAt: 46, fence: 2)
        #expect(Self.rules(c) == [.grantOverlap])
    }

    @Test func redisWordsInReports() throws {
        let c = OverlapChecker(
            labels: ["lock:load:b1"], groups: [0], panels: [0], groupLabels: ["lock:load:b1"],
            grantWord: "+OK to SET NX", releaseWord: "DEL", origin: 1_000_000_000)
        c.granted(button: 0, by: 4, readAt: 2_500_000_000)
        c.granted(button: 0, by: 9, readAt: 2_500_000_001)
        let v = try #require(c.violations.first)
        #expect(
            v.description == """
                VIOLATION grant-overlap: c9 read a grant of lock:load:b1 while c4's grant of it was read and its DEL not yet sent
                    c4: +OK to SET NX lock:load:b1 read at 1.500000000 s, no DEL sent yet
                    c9: +OK to SET NX lock:load:b1 read at 1.500000001 s
                """)
    }
}
