import Testing
import ArbiterLoadKit

/// One doctored history per rule: each must be caught, and only by its rule.
@Suite struct SafetyCheckerTests {
    let clean = HistoryScript.clean

    @Test func cleanHistoryPasses() {
        let checker = HistoryScript.check(clean)
        #expect(checker.violations.isEmpty, "\(checker.violations)")
        #expect(checker.eventsChecked == 19 + 18)
        #expect(checker.eventsCompared == 18)
    }

    @Test func twoOwnersOfOneGroup() {
        // b2 (same group as b1) is pressed at seq 5 and b1 released only at 6.
        let doctored =
            clean
            .replacing("RELEASED load b1 reason=up owner=c1 fence=1 seq=5", with: "TMP")
            .replacing("PRESSED load b2 owner=c2 session=s3 fence=2 seq=6", with: "PRESSED load b2 owner=c2 session=s3 fence=2 seq=5")
            .replacing("TMP", with: "RELEASED load b1 reason=up owner=c1 fence=1 seq=6")
            .moving("obs: RELEASED load b1 reason=up owner=c1 fence=1 seq=6", after: "obs: PRESSED load b2 owner=c2 session=s3 fence=2 seq=5")
            .moving("p: RELEASED load b1 reason=up owner=c1 fence=1 seq=6", after: "p: PRESSED load b2 owner=c2 session=s3 fence=2 seq=5")
        #expect(HistoryScript.broken(doctored) == [.twoOwners])
    }

    @Test func fenceNotIncreasing() {
        let doctored = clean.replacing("fence=4", with: "fence=3")
        #expect(HistoryScript.broken(doctored) == [.fenceOrder])
    }

    @Test func fenceNotAboveTheSnapshot() {
        let doctored = clean.replacing("OK JOIN load members=1 fence=0 seq=0", with: "OK JOIN load members=1 fence=7 seq=0")
        #expect(HistoryScript.broken(doctored).contains(.fenceOrder))
    }

    @Test func seqGapInOneMember() {
        let doctored = clean.filter { $0 != "obs: MIDWAY load h1 seq=10" }
        #expect(HistoryScript.broken(doctored) == [.seqGap])
    }

    @Test func snapshotAgainAfterAMissedEvent() {
        // The last event never reached obs, but its final JOIN says seq=19.
        let doctored = clean.filter { $0 != "obs: RELEASED load t1 reason=up owner=c1 fence=5 seq=19" }
        #expect(HistoryScript.broken(doctored) == [.seqGap])
    }

    /// A snapshot obs did not ask for (its node resynchronised it, and it knew of no grant,
    /// so no failover release came first) may skip what obs missed.
    @Test func aResyncSnapshotThatSkipsMissedEventsPasses() {
        var doctored = clean.filter { !$0.hasPrefix("obs: (JOIN sent)") }
        let cut = doctored.firstIndex(of: "obs: RELEASED load t1 reason=up owner=c1 fence=5 seq=19")!
        doctored.remove(at: cut)
        let checker = HistoryScript.check(doctored)
        #expect(checker.violations.isEmpty, "\(checker.violations)")
    }

    @Test func aResyncSnapshotFromBeforeWhatWasSeenIsCaught() {
        let doctored = clean.filter { !$0.hasPrefix("obs: (JOIN sent)") }
            .replacing("obs: OK JOIN load members=2 fence=5 seq=19", with: "obs: OK JOIN load members=2 fence=5 seq=12")
        let found = HistoryScript.check(doctored).violations
        #expect(found.contains { $0.rule == .seqGap && $0.message.contains("snapshot at seq=12 after the event of seq=19") }, "\(found)")
    }

    /// p's UP of t1 was answered `ERROR unavailable ... may or may not have been done`
    /// (its answer was lost between nodes) and it had been done: its STOPPED comes with
    /// no OK UP before it.
    static let undecidedUp = [
        "p: ERROR unavailable its answer from panel load's leader was lost on the way; it may or may not have been done; try again in a second or two",
        "p: (UP undecided: button t1)",
    ]

    @Test func aStopAfterAnUndecidedUpPasses() {
        let doctored = clean.replacing(["p: OK UP load t1"], with: Self.undecidedUp)
        let checker = HistoryScript.check(doctored)
        #expect(checker.violations.isEmpty, "\(checker.violations)")
    }

    @Test func aStopBeforeAnyAnswerToTheUpIsCaught() {
        let doctored = clean.replacing(["p: OK UP load t1"], with: [Self.undecidedUp[0]])
        #expect(HistoryScript.broken(doctored).contains(.stoppedBeforeUp))
    }

    @Test func membersDisagreeAtOneSeq() {
        let doctored = clean.replacing("obs: MIDWAY load h1 seq=10", with: "obs: PROGRESS load h1 value=0.500 seq=10")
        #expect(HistoryScript.broken(doctored) == [.seqDisagree])
    }

    @Test func pressedNeverReleased() {
        let doctored = clean.replacing("RELEASED load h1 reason=up owner=c1 fence=4 seq=15", with: "MIDWAY load h1 seq=15")
        #expect(HistoryScript.broken(doctored) == [.pressRelease])
    }

    @Test func releasedTwice() {
        let doctored = clean.replacing(
            "STARTED load t1 owner=c1 session=s2 fence=5 seq=17",
            with: "RELEASED load b1 reason=up owner=c1 fence=1 seq=17")
        #expect(HistoryScript.broken(doctored) == [.pressRelease])
    }

    @Test func holdFiredTwice() {
        let doctored = clean.replacing("MIDWAY load h1 seq=10", with: "FIRED load h1 owner=c1 session=s2 fence=3 seq=10")
        #expect(HistoryScript.broken(doctored) == [.firedCount])
    }

    @Test func holdCompletedWithoutFired() {
        let doctored = clean.replacing("FIRED load h1 owner=c1 session=s2 fence=3 seq=12", with: "PROGRESS load h1 value=1.000 seq=12")
        #expect(HistoryScript.broken(doctored) == [.firedCount])
    }

    @Test func stoppedBeforeTheOwnersUp() {
        let doctored = clean.moving(
            "p: OK UP load t1",
            after: "p: STOPPED load t1 owner=c1 session=s2 fence=5 held_ms=400 discarded=false reason=up seq=18")
        #expect(HistoryScript.broken(doctored) == [.stoppedBeforeUp])
    }

    @Test func grantedToOneClientPressedForAnother() {
        // q is told it holds b1 with fence 1, but the members saw p get fence 1.
        let doctored = clean.replacing("q: DENIED load b2 reason=busy owner=c1 active=b1", with: "q: GRANTED load b1 fence=1")
        #expect(HistoryScript.broken(doctored) == [.grantMismatch])
    }

    @Test func grantedButNeverAnnounced() {
        let doctored = clean.replacing("q: DENIED load b2 reason=busy owner=c1 active=b1", with: "q: GRANTED load b2 fence=9")
        #expect(HistoryScript.broken(doctored) == [.grantMismatch])
    }

    @Test func pressedBeforeItsGranted() {
        let doctored = clean.moving("p: GRANTED load b1 fence=1", after: "p: PRESSED load b1 owner=c1 session=s2 fence=1 seq=3")
        #expect(HistoryScript.broken(doctored) == [.replyOrder])
    }

    @Test func violationsNameTheOffendingEvents() throws {
        let checker = HistoryScript.check(clean.replacing("fence=4", with: "fence=3"))
        let violation = try #require(checker.violations.first)
        #expect(
            violation.evidence == [
                "p: PRESSED load h1 owner=c1 session=s2 fence=3 seq=8",
                "p: PRESSED load h1 owner=c1 session=s2 fence=3 seq=14",
            ])
        #expect(violation.description.hasPrefix("VIOLATION fence-order: "))
    }
}
