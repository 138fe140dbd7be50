import Testing
import ArbiterLoadKit

/// Doctored histories of queue and buzzer groups: each is caught, by its rule.
@Suite struct FairCheckerTests {
    @Test func cleanQueueHistoryPasses() {
        let checker = FairHistoryScript.check(FairHistoryScript.queue)
        #expect(checker.violations.isEmpty, "\(checker.violations)")
    }

    @Test func cleanBuzzHistoryPasses() {
        let checker = FairHistoryScript.check(FairHistoryScript.buzz)
        #expect(checker.violations.isEmpty, "\(checker.violations)")
        #expect(checker.roundsArmed == 2)
    }

    @Test func grantOutOfArrivalOrder() {
        // s4 queued second but is granted first.
        let doctored = FairHistoryScript.queue
            .replacing("p3: GRANTED load b fence=2", with: "p4: GRANTED load b fence=2")
            .replacing("PRESSED load b owner=c3 session=s3 fence=2 seq=6", with: "PRESSED load b owner=c4 session=s4 fence=2 seq=6")
            .replacing("FIRED load b owner=c3 session=s3", with: "FIRED load b owner=c4 session=s4")
            .replacing("DEQUEUED load a name=c4 session=s4 position=1", with: "DEQUEUED load a name=c3 session=s3 position=1")
            .replacing("RELEASED load b reason=up owner=c3", with: "RELEASED load b reason=up owner=c4")
        #expect(FairHistoryScript.broken(doctored) == [.queueOrder])
    }

    @Test func handOffNotAtOnce() {
        // Something else happens between the release and the head's grant.
        let doctored = FairHistoryScript.queue
            .replacing("seq=9", with: "seq=10").replacing("seq=8", with: "seq=9").replacing("seq=7", with: "seq=8").replacing("seq=6", with: "seq=7")
            .replacing("obs: RELEASED load a reason=up owner=c2 fence=1 seq=5", with: "obs: RELEASED load a reason=up owner=c2 fence=1 seq=5\nX")
            .flatMap { $0.split(separator: "\n").map(String.init) }
            .replacing("X", with: "obs: JOINED load name=c9 session=s9 seq=6")
        #expect(FairHistoryScript.broken(doctored) == [.queueOrder])
    }

    @Test func queuedPressNeverGrantedNorDequeued() {
        let doctored = FairHistoryScript.queue.filter { $0 != "obs: DEQUEUED load a name=c4 session=s4 position=1 reason=cancel seq=8" }
            .replacing("seq=9", with: "seq=8")
        #expect(FairHistoryScript.broken(doctored) == [.queueLeft])
    }

    @Test func wrongQueuePosition() {
        let doctored = FairHistoryScript.queue.replacing("session=s4 position=2 seq=4", with: "session=s4 position=1 seq=4")
        #expect(FairHistoryScript.broken(doctored) == [.queueOrder])
    }

    @Test func secondOwnerOfAQueueGroup() {
        // s3 is granted while s2 still owns the group.
        let doctored = FairHistoryScript.queue
            .moving("obs: RELEASED load a reason=up owner=c2 fence=1 seq=5", after: "obs: FIRED load b owner=c3 session=s3 fence=2 seq=7")
            .replacing("RELEASED load a reason=up owner=c2 fence=1 seq=5", with: "RELEASED load a reason=up owner=c2 fence=1 seq=7")
            .replacing("PRESSED load b owner=c3 session=s3 fence=2 seq=6", with: "PRESSED load b owner=c3 session=s3 fence=2 seq=5")
            .replacing("FIRED load b owner=c3 session=s3 fence=2 seq=7", with: "FIRED load b owner=c3 session=s3 fence=2 seq=6")
        #expect(FairHistoryScript.broken(doctored).contains(.twoOwners))
    }

    @Test func twoWinnersInOneRound() {
        let doctored = FairHistoryScript.buzz
            .replacing("p3: RANKED load blue rank=2 after_us=120", with: "p3: GRANTED load blue fence=9")
            .replacing("BUZZED load blue name=c3 session=s3 rank=2 after_us=120 seq=4", with: "PRESSED load blue owner=c3 session=s3 fence=9 seq=4")
        #expect(FairHistoryScript.broken(doctored).contains(.buzzerRound))
    }

    @Test func downAcceptedWhileClosed() {
        // The second round's winner is granted before ARMED.
        let doctored = FairHistoryScript.buzz
            .replacing("obs: ARMED load quiz seq=8", with: "TMP")
            .replacing("PRESSED load blue owner=c4 session=s4 fence=2 seq=9", with: "PRESSED load blue owner=c4 session=s4 fence=2 seq=8")
            .replacing("TMP", with: "obs: ARMED load quiz seq=9")
            .moving("obs: ARMED load quiz seq=9", after: "obs: PRESSED load blue owner=c4 session=s4 fence=2 seq=8")
        #expect(FairHistoryScript.broken(doctored).contains(.buzzerRound))
    }

    @Test func ranksOutOfOrderOfAfterUs() {
        let doctored = FairHistoryScript.buzz
            .replacing("rank=3 after_us=120", with: "rank=3 after_us=90")
        #expect(FairHistoryScript.broken(doctored) == [.buzzerRank])
    }

    @Test func rankSkipped() {
        let doctored = FairHistoryScript.buzz.replacing("rank=3 after_us=120", with: "rank=4 after_us=120")
        #expect(FairHistoryScript.broken(doctored) == [.buzzerRank])
    }

    @Test func parsesFairMessagesInBothForms() {
        let table = ButtonTable(panel: "load", buttons: FairHistoryScript.buttons)
        func parse(_ s: String) -> WireMessage {
            var wire = Array(s.utf8)
            return wire.withUnsafeMutableBufferPointer { raw in
                s.hasPrefix("{")
                    ? JSONMessageParser.parse(UnsafeBufferPointer(raw), 0..<raw.count, buttons: table)
                    : LineMessageParser.parse(UnsafeBufferPointer(raw), 0..<raw.count, buttons: table)
            }
        }
        let text = parse("BUZZED load blue name=c3 session=s3 rank=2 after_us=120 seq=4")
        let json = parse(#"{"type":"buzzed","panel":"load","button":"blue","name":"c3","session":"s3","rank":2,"after_us":120,"seq":4}"#)
        #expect(text == json)
        #expect(text.kind == .buzzed && text.rank == 2 && text.afterUs == 120 && text.button == 3)
        #expect(parse("QUEUED load a position=2 owner=c2").kind == .queued)
        #expect(parse(#"{"type":"queued","panel":"load","button":"a","name":"c4","session":"s4","position":2,"seq":4}"#).kind == .queuedEvent)
        #expect(parse("ARMED load quiz seq=1").group == 1)
        #expect(parse(#"{"type":"closed","panel":"load","group":"quiz","seq":7}"#).group == 1)
        #expect(parse("DENIED load red reason=locked-out").reason == .lockedOut)
        let round = parse("ROUND load quiz state=won")
        #expect(round.kind == .roundState && round.group == 1 && round.round == .won)
        #expect(round == parse(#"{"type":"round","panel":"load","group":"quiz","state":"won"}"#))
        let rank = parse("RANK load blue name=c3 session=s3 rank=2 after_us=120")
        #expect(rank.kind == .rankState && rank.button == 3 && rank.session == 3 && rank.rank == 2 && rank.afterUs == 120)
        #expect(rank == parse(#"{"type":"rank","panel":"load","button":"blue","name":"c3","session":"s3","rank":2,"after_us":120}"#))
        #expect(parse("WAITING load a name=c4 session=s4 position=1").kind == .groupState)
    }

    /// A member whose snapshot came in the middle of a round (it joined, or its node
    /// resynchronised it, after the ARMED): the round goes on from the snapshot's ROUND
    /// and RANK lines. Before, the model started with the round closed, and its next
    /// BUZZED was reported (nemesis buzz seed 70: "BUZZED while the round is closed").
    @Test func aSnapshotInTheMiddleOfARoundCarriesItsRanks() {
        let checker = FairHistoryScript.check(FairHistoryScript.buzzJoinedMidRound)
        #expect(checker.violations.isEmpty, "\(checker.violations)")
        // The ranks it carries are still held to: the next must be 3, by a session not yet ranked.
        #expect(FairHistoryScript.broken(FairHistoryScript.buzzJoinedMidRound.replacing("rank=3 after_us=150", with: "rank=4 after_us=150")) == [.buzzerRank])
        #expect(
            FairHistoryScript.broken(FairHistoryScript.buzzJoinedMidRound.replacing("name=c4 session=s4 rank=3", with: "name=c3 session=s3 rank=3")) == [
                .buzzerRank
            ])
        #expect(FairHistoryScript.broken(FairHistoryScript.buzzJoinedMidRound.replacing("state=won", with: "state=closed")) == [.buzzerRound])
    }

    /// Cluster mode: the head's hand-off GRANTED can go with its node's link, and the
    /// leader then ends the grant `reason=disconnect`. Counted as a lost hand-off, not a
    /// violation; a hand-off that ended any other way must have reached the waiter.
    @Test func aHandOffLostWithItsNodesLinkIsCounted() {
        func history(endedBy reason: String) -> [String] {
            var lines = ["obs: WELCOME session=s1 name=c0 proto=1"]
            lines += FairHistoryScript.snapshot(seq: 0, fence: 0)
            lines += [
                "p2: WELCOME session=s2 name=c2 proto=1", "p2: OK HELLO name=c2 session=s2 role=admin",
                "p3: WELCOME session=s3 name=c3 proto=1", "p3: OK HELLO name=c3 session=s3 role=admin",
                "p2: GRANTED load a fence=1",
                "obs: PRESSED load a owner=c2 session=s2 fence=1 seq=1",
                "obs: FIRED load a owner=c2 session=s2 fence=1 seq=2",
                "p3: QUEUED load a position=1 owner=c2",
                "obs: QUEUED load a name=c3 session=s3 position=1 seq=3",
                "p2: OK UP load a",
                "obs: RELEASED load a reason=up owner=c2 fence=1 seq=4",
                "obs: PRESSED load a owner=c3 session=s3 fence=2 seq=5",
                "obs: FIRED load a owner=c3 session=s3 fence=2 seq=6",
                "obs: RELEASED load a reason=\(reason) owner=c3 fence=2 seq=7",
            ]
            return lines + FairHistoryScript.snapshot(seq: 7, fence: 2)
        }
        let lost = FairHistoryScript.check(history(endedBy: "disconnect"))
        #expect(lost.violations.isEmpty, "\(lost.violations)")
        #expect(lost.lostHandOffs == 1)
        let unseen = FairHistoryScript.check(history(endedBy: "timeout"))
        #expect(unseen.violations.contains { $0.rule == .grantMismatch }, "\(unseen.violations)")
        #expect(unseen.lostHandOffs == 0)
    }

    /// Cluster mode: a hand-off that waits for the next block of fences comes after other
    /// releases (here a buzzer winner's), with nothing decided in between: not a
    /// violation. A decision in between (a JOINED) still is.
    @Test func aHandOffDeferredForFencesMayFollowOtherReleases() {
        func history(between: String) -> [String] {
            var lines = ["obs: WELCOME session=s1 name=c0 proto=1"]
            lines += FairHistoryScript.snapshot(seq: 0, fence: 0)
            lines += [
                "obs: ARMED load quiz seq=1",
                "obs: PRESSED load red owner=c5 session=s5 fence=1 seq=2",
                "obs: FIRED load red owner=c5 session=s5 fence=1 seq=3",
                "obs: PRESSED load a owner=c2 session=s2 fence=2 seq=4",
                "obs: FIRED load a owner=c2 session=s2 fence=2 seq=5",
                "obs: QUEUED load b name=c3 session=s3 position=1 seq=6",
                "obs: RELEASED load a reason=up owner=c2 fence=2 seq=7",
                between,
                "obs: PRESSED load b owner=c3 session=s3 fence=3 seq=9",
                "obs: FIRED load b owner=c3 session=s3 fence=3 seq=10",
                "obs: RELEASED load b reason=up owner=c3 fence=3 seq=11",
            ]
            return lines
        }
        let deferred = FairHistoryScript.check(history(between: "obs: RELEASED load red reason=up owner=c5 fence=1 seq=8"))
        #expect(deferred.violations.isEmpty, "\(deferred.violations)")
        #expect(FairHistoryScript.broken(history(between: "obs: JOINED load name=c9 session=s9 seq=8")) == [.queueOrder])
    }
}
