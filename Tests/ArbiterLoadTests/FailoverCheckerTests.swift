import Testing
import ArbiterLoadKit

/// The checker's cluster-mode rules (SafetyChecker+Failover), on doctored histories: a
/// leader change in the middle of a held press, then the new term's traffic.
@Suite struct FailoverCheckerTests {
    static func snapshot(_ stream: String, seq: Int, fence: Int, members: Int, term: Int, pressed: String? = nil) -> [String] {
        HistoryScript.buttons.map {
            let state = $0.id == pressed ? "pressed owner=c1" : "idle owner=-"
            return "\(stream): BUTTON load \($0.id) kind=\($0.kind) group=\($0.group) state=\(state) progress=0.000"
        } + ["\(stream): OK JOIN load members=\(members) fence=\(fence) seq=\(seq) term=\(term)"]
    }

    /// obs and p are members on different nodes; p holds h1 when the leader of term 10
    /// dies; the leader of term 20 starts above fence 2000.
    static let history: [String] = {
        var lines = ["obs: WELCOME session=s1 name=c0 proto=1", "obs: OK HELLO name=c0 session=s1 role=admin"]
        lines += snapshot("obs", seq: 0, fence: 1000, members: 1, term: 10)
        lines += [
            "obs: JOINED load name=c0 session=s1 seq=1",
            "p: WELCOME session=s2 name=c1 proto=1", "p: OK HELLO name=c1 session=s2 role=admin",
        ]
        lines += snapshot("p", seq: 1, fence: 1000, members: 2, term: 10)
        lines += [
            "p: JOINED load name=c1 session=s2 seq=2",
            "obs: JOINED load name=c1 session=s2 seq=2",
            "p: GRANTED load h1 fence=1001",
            "p: PRESSED load h1 owner=c1 session=s2 fence=1001 seq=3",
            "obs: PRESSED load h1 owner=c1 session=s2 fence=1001 seq=3",
            // The leader dies here.
            "p: RELEASED load h1 reason=failover owner=c1 fence=1001",
            "obs: RELEASED load h1 reason=failover owner=c1 fence=1001",
        ]
        lines += snapshot("p", seq: 0, fence: 2000, members: 2, term: 20)
        lines += snapshot("obs", seq: 0, fence: 2000, members: 2, term: 20)
        lines += [
            "p: GRANTED load b1 fence=2001",
            "p: PRESSED load b1 owner=c1 session=s2 fence=2001 seq=1",
            "p: FIRED load b1 owner=c1 session=s2 fence=2001 seq=2",
            "obs: PRESSED load b1 owner=c1 session=s2 fence=2001 seq=1",
            "obs: FIRED load b1 owner=c1 session=s2 fence=2001 seq=2",
            "p: OK UP load b1",
            "p: RELEASED load b1 reason=up owner=c1 fence=2001 seq=3",
            "obs: RELEASED load b1 reason=up owner=c1 fence=2001 seq=3",
        ]
        lines += snapshot("obs", seq: 3, fence: 2001, members: 2, term: 20)
        lines += snapshot("p", seq: 3, fence: 2001, members: 2, term: 20)
        return lines
    }()

    /// A node that lost frames from a living leader (a link closed with them queued, or a
    /// seq hole) tells its members the grants they knew of ended, then a snapshot of the
    /// same term: the grant goes on, and its real RELEASED comes later in the panel's order.
    @Test func aSameTermResyncOfOneNodesMembersPasses() {
        var lines = Array(Self.history.prefix { $0 != "p: RELEASED load h1 reason=failover owner=c1 fence=1001" })
        lines += ["obs: RELEASED load h1 reason=failover owner=c1 fence=1001"]
        lines += Self.snapshot("obs", seq: 3, fence: 1001, members: 2, term: 10, pressed: "h1")
        lines += [
            "p: OK UP load h1",
            "p: RELEASED load h1 reason=up owner=c1 fence=1001 seq=4",
            "obs: RELEASED load h1 reason=up owner=c1 fence=1001 seq=4",
        ]
        let checker = HistoryScript.check(lines)
        #expect(checker.violations.isEmpty, "\(checker.violations)")
    }

    /// obs, on a node that resynchronised it while it knew of no grant, sends its own JOIN
    /// before the resync's snapshot comes: the snapshot it reads is past the events it
    /// missed (`bench/cluster.sh`'s fan-out over three nodes, 1 run of 8). Counted, not a
    /// violation, in cluster mode; `snapshotAgainAfterAMissedEvent` is the single node's.
    static func joinAcrossAResync(snapshotSeq: Int) -> [String] {
        var lines = Array(Self.history.prefix { $0 != "obs: PRESSED load h1 owner=c1 session=s2 fence=1001 seq=3" })
        lines += [
            "p: OK UP load h1",
            "p: RELEASED load h1 reason=up owner=c1 fence=1001 seq=4",
            // obs's node resynchronises here: seq 3 and 4 never reach obs.
            "obs: (JOIN sent)",
        ]
        lines += Self.snapshot("obs", seq: snapshotSeq, fence: 1001, members: 2, term: 10)
        return lines
    }

    @Test func aJoinAgainAnsweredPastAResyncedGapIsCounted() {
        let checker = HistoryScript.check(Self.joinAcrossAResync(snapshotSeq: 4))
        #expect(checker.violations.isEmpty, "\(checker.violations)")
        #expect(checker.joinsPastAGap == 1)
    }

    @Test func aJoinAgainAnsweredFromBeforeWhatWasSeenIsCaught() {
        let checker = HistoryScript.check(Self.joinAcrossAResync(snapshotSeq: 1))
        #expect(checker.violations.contains { $0.rule == .seqGap && $0.message.contains("snapshot again at seq=1") }, "\(checker.violations)")
        #expect(checker.joinsPastAGap == 0)
    }

    /// The same on the owner's own node, with a talk button (`bench/nemesis.py`, seed 28,
    /// holds): p reads the failover release of its own grant and the same term's snapshot,
    /// which still shows it; its UP then gets `OK UP` and the grant's `STOPPED
    /// reason=up`, in that order, as at any UP.
    static func ownGrantThroughASameTermResync(replyFirst: Bool) -> [String] {
        var lines = Array(Self.history.prefix { $0 != "p: GRANTED load h1 fence=1001" })
        lines += [
            "p: GRANTED load t1 fence=1001",
            "p: PRESSED load t1 owner=c1 session=s2 fence=1001 seq=3",
            "obs: PRESSED load t1 owner=c1 session=s2 fence=1001 seq=3",
            "p: STARTED load t1 owner=c1 session=s2 fence=1001 seq=4",
            "obs: STARTED load t1 owner=c1 session=s2 fence=1001 seq=4",
            "p: RELEASED load t1 reason=failover owner=c1 fence=1001",
        ]
        lines += Self.snapshot("p", seq: 4, fence: 1001, members: 2, term: 10, pressed: "t1")
        let ends = [
            "p: STOPPED load t1 owner=c1 session=s2 fence=1001 held_ms=900 discarded=false reason=up seq=5",
            "p: RELEASED load t1 reason=up owner=c1 fence=1001 seq=6",
        ]
        lines += replyFirst ? ["p: OK UP load t1"] + ends : ends + ["p: OK UP load t1"]
        lines += [
            "obs: STOPPED load t1 owner=c1 session=s2 fence=1001 held_ms=900 discarded=false reason=up seq=5",
            "obs: RELEASED load t1 reason=up owner=c1 fence=1001 seq=6",
        ]
        return lines
    }

    @Test func anOwnGrantStillHeldAfterASameTermResyncEndsAsAnyOther() {
        let checker = HistoryScript.check(Self.ownGrantThroughASameTermResync(replyFirst: true))
        #expect(checker.violations.isEmpty, "\(checker.violations)")
    }

    @Test func anOwnGrantsStopBeforeItsReplyAfterASameTermResyncIsCaught() {
        #expect(HistoryScript.broken(Self.ownGrantThroughASameTermResync(replyFirst: false)).contains(.stoppedBeforeUp))
    }

    /// p's node closed p's connection (it woke from a pause with p's GRANTED unwritten, or
    /// died) after its DOWN was decided: obs read the PRESSED, p never the GRANTED. The
    /// DOWN may or may not have been done, as p cannot know; only a connection that was
    /// closed with nothing unanswered makes that PRESSED a mismatch.
    static let grantedThenLost: [String] =
        Array(Self.history.prefix { $0 != "p: GRANTED load h1 fence=1001" }) + [
            "obs: PRESSED load b1 owner=c1 session=s2 fence=1001 seq=3",
            "obs: FIRED load b1 owner=c1 session=s2 fence=1001 seq=4",
            "p: (lost with a DOWN unanswered)",
            "obs: RELEASED load b1 reason=disconnect owner=c1 fence=1001 seq=5",
            "obs: LEFT load name=c1 session=s2 seq=6",
        ] + Self.snapshot("obs", seq: 6, fence: 1001, members: 1, term: 10)

    @Test func aPressOfAConnectionLostWithItsDownUnansweredPasses() {
        let checker = HistoryScript.check(Self.grantedThenLost)
        #expect(checker.violations.isEmpty, "\(checker.violations)")
    }

    @Test func aPressOfAConnectionClosedWithNothingUnansweredIsCaught() {
        let doctored = Self.grantedThenLost.replacing("p: (lost with a DOWN unanswered)", with: "p: (closed)")
        #expect(HistoryScript.broken(doctored) == [.grantMismatch])
    }

    /// Every member was joining the new term when p's press was granted: their
    /// snapshots show b1 pressed (fence 2001 handed out) and no PRESSED; p's GRANTED
    /// comes after (`bench/nemesis.py`, seed 28, holds: three observers on one node).
    static func grantedBeforeEveryMembersSnapshot(fence: Int) -> [String] {
        var lines = Array(Self.history.prefix { $0 == "p: RELEASED load h1 reason=failover owner=c1 fence=1001" ? false : true })
        lines += ["p: RELEASED load h1 reason=failover owner=c1 fence=1001", "obs: RELEASED load h1 reason=failover owner=c1 fence=1001"]
        lines += Self.snapshot("p", seq: 0, fence: 2001, members: 2, term: 20, pressed: "b1")
        lines += Self.snapshot("obs", seq: 0, fence: 2001, members: 2, term: 20, pressed: "b1")
        lines += [
            "p: GRANTED load b1 fence=\(fence)",
            "p: OK UP load b1",
            "p: RELEASED load b1 reason=up owner=c1 fence=2001 seq=1",
            "obs: RELEASED load b1 reason=up owner=c1 fence=2001 seq=1",
        ]
        lines += Self.snapshot("obs", seq: 1, fence: 2001, members: 2, term: 20)
        return lines
    }

    @Test func aGrantMadeBeforeEveryMembersSnapshotPasses() {
        let checker = HistoryScript.check(Self.grantedBeforeEveryMembersSnapshot(fence: 2001))
        #expect(checker.violations.isEmpty, "\(checker.violations)")
    }

    @Test func aGrantAboveTheSnapshotsFenceThatNoMemberSawIsCaught() {
        #expect(HistoryScript.broken(Self.grantedBeforeEveryMembersSnapshot(fence: 2002)).contains(.grantMismatch))
    }

    @Test func aCleanFailoverPasses() {
        let checker = HistoryScript.check(Self.history)
        #expect(checker.violations.isEmpty, "\(checker.violations)")
    }

    @Test func failoverIsAReasonOfItsOwn() {
        // Read as any other reason, the release would be a normal event with no seq.
        #expect(HistoryScript.check(Self.history.replacing("reason=failover", with: "reason=up")).violations.isEmpty == false)
    }

    @Test func aHoldThatFiresAfterItsFailoverIsCaught() {
        let doctored = Self.history
            .replacing("p: FIRED load b1 owner=c1 session=s2 fence=2001 seq=2", with: "p: FIRED load h1 owner=c1 session=s2 fence=1001 seq=2")
            .replacing("obs: FIRED load b1 owner=c1 session=s2 fence=2001 seq=2", with: "obs: FIRED load h1 owner=c1 session=s2 fence=1001 seq=2")
        #expect(HistoryScript.broken(doctored).contains(.firedCount))
    }

    @Test func aFenceOfTheNewTermNotAboveTheOldOnesIsCaught() {
        let doctored = Self.history.replacing("fence=2001", with: "fence=1001").replacing("fence=2000", with: "fence=1000")
        #expect(HistoryScript.broken(doctored).contains(.failover))
    }

    @Test func aLaggingMembersOldTermFenceAboveTheNewTermsIsCaught() {
        // late still reads term 10 (its node has not seen the new leader) and gets a
        // PRESSED of term 10 above the fence the new term already handed out.
        var doctored = Self.history
        let at = doctored.firstIndex(of: "p: OK UP load b1")!
        var late = ["late: WELCOME session=s9 name=c9 proto=1"]
        late += Self.snapshot("late", seq: 3, fence: 1001, members: 3, term: 10)
        late += [
            "late: RELEASED load h1 reason=up owner=c1 fence=1001 seq=4",
            "late: PRESSED load b2 owner=c0 session=s1 fence=2500 seq=5",
        ]
        doctored.insert(contentsOf: late, at: at)
        #expect(HistoryScript.broken(doctored) == [.failover])
    }

    @Test func anEventBetweenTheFailoverReleaseAndTheNewSnapshotIsCaught() {
        let doctored = Self.history.moving(
            "obs: PRESSED load b1 owner=c1 session=s2 fence=2001 seq=1",
            after: "obs: RELEASED load h1 reason=failover owner=c1 fence=1001")
        #expect(HistoryScript.broken(doctored).contains(.failover))
    }

    @Test func aFailoverReleaseOfAGrantThatIsNotOpenIsCaught() {
        let doctored = Self.history
            .replacing("p: RELEASED load h1 reason=failover owner=c1 fence=1001", with: "p: RELEASED load b2 reason=failover owner=c1 fence=999")
            .replacing("obs: RELEASED load h1 reason=failover owner=c1 fence=1001", with: "obs: RELEASED load b2 reason=failover owner=c1 fence=999")
        #expect(HistoryScript.broken(doctored) == [.failover])
    }

    /// p, on the leader's own node, read h1's RELEASED reason=up; the leader died before
    /// that event reached obs's node, which then owed obs the failover release of h1 (open
    /// as obs knew it). Found by bench/cluster.sh's 20 failovers (11 such reports).
    static let releaseCutOffOnItsWay: [String] =
        Self.history.prefix { $0 != "p: RELEASED load h1 reason=failover owner=c1 fence=1001" }
        + ["p: OK UP load h1", "p: RELEASED load h1 reason=up owner=c1 fence=1001 seq=4"]
        + ["obs: RELEASED load h1 reason=failover owner=c1 fence=1001"]
        + Self.snapshot("obs", seq: 0, fence: 2000, members: 1, term: 20)

    @Test func aFailoverReleaseOfAGrantWhoseReleaseNeverReachedTheMemberPasses() {
        let checker = HistoryScript.check(Self.releaseCutOffOnItsWay)
        #expect(checker.violations.isEmpty, "\(checker.violations)")
    }

    @Test func aFailoverReleaseOfAGrantTheMemberSawReleasedIsCaught() {
        var doctored = Self.releaseCutOffOnItsWay
        let at = doctored.firstIndex(of: "obs: RELEASED load h1 reason=failover owner=c1 fence=1001")!
        doctored.insert("obs: RELEASED load h1 reason=up owner=c1 fence=1001 seq=4", at: at)
        #expect(HistoryScript.broken(doctored) == [.failover])
    }

    /// A node restarted in a cluster numbers its sessions from the same base again: after
    /// p's connection closed, another client (not arbiter-load's) got p's session number
    /// and pressed. Found by bench/cluster.sh (its probes on restarted nodes).
    @Test func aSessionNumberUsedAgainAfterItsConnectionClosedIsNotTheLoadersPress() {
        let doctored =
            Self.history + [
                "p: (closed)",
                "obs: PRESSED load b2 owner=probe session=s2 fence=2002 seq=4",
                "obs: FIRED load b2 owner=probe session=s2 fence=2002 seq=5",
                "obs: RELEASED load b2 reason=up owner=probe fence=2002 seq=6",
            ] + Self.snapshot("obs", seq: 6, fence: 2002, members: 1, term: 20)
        let checker = HistoryScript.check(doctored)
        #expect(checker.violations.isEmpty, "\(checker.violations)")
        // While p is open, a PRESSED of its session without its GRANTED is still caught.
        let open =
            Self.history + [
                "obs: PRESSED load b2 owner=c1 session=s2 fence=2002 seq=4",
                "obs: FIRED load b2 owner=c1 session=s2 fence=2002 seq=5",
                "obs: RELEASED load b2 reason=up owner=c1 fence=2002 seq=6",
            ] + Self.snapshot("obs", seq: 6, fence: 2002, members: 2, term: 20)
        #expect(HistoryScript.broken(open).contains(.grantMismatch))
    }

    /// A relayed DOWN that the leader granted and announced just before it died: the
    /// other nodes' members read its PRESSED, but the reply never reached the presser's
    /// node, which answered `ERROR unavailable ... may or may not have been done`. Found
    /// by bench/cluster.sh. One such answer accounts for one PRESSED, no more.
    @Test func anUndecidedAnswerAccountsForOneGrantWithoutItsGranted() {
        let pressed = [
            "obs: PRESSED load b2 owner=c1 session=s2 fence=2002 seq=4",
            "obs: FIRED load b2 owner=c1 session=s2 fence=2002 seq=5",
            "obs: RELEASED load b2 reason=up owner=c1 fence=2002 seq=6",
        ]
        let undecided =
            "p: ERROR unavailable the leader of panel load went away before answering; it may or may not have been done "
            + "(a grant it got ended with the failover); try again in a second or two"
        let answered = Self.history + pressed + [undecided] + Self.snapshot("obs", seq: 6, fence: 2002, members: 2, term: 20)
        let checker = HistoryScript.check(answered)
        #expect(checker.violations.isEmpty, "\(checker.violations)")
        #expect(checker.undecidedGrants == 1)
        // The answer may also come before another member reads the PRESSED.
        let early = Self.history + [undecided] + pressed + Self.snapshot("obs", seq: 6, fence: 2002, members: 2, term: 20)
        #expect(HistoryScript.check(early).violations.isEmpty)
        // An unavailable answer that says nothing was done accounts for nothing.
        let refused = Self.history + pressed + ["p: ERROR unavailable panel load has no leader right now; nothing was done"]
        #expect(HistoryScript.broken(refused + Self.snapshot("obs", seq: 6, fence: 2002, members: 2, term: 20)) == [.grantMismatch])
        // One undecided answer, two grants without a GRANTED: one is still reported.
        let two: [String] =
            Array(answered.prefix(answered.count - 5))
            + [
                "obs: PRESSED load b1 owner=c1 session=s2 fence=2003 seq=7",
                "obs: FIRED load b1 owner=c1 session=s2 fence=2003 seq=8",
                "obs: RELEASED load b1 reason=up owner=c1 fence=2003 seq=9",
            ] + Self.snapshot("obs", seq: 9, fence: 2003, members: 2, term: 20)
        let twice = HistoryScript.check(two)
        #expect(twice.violations.map { $0.rule } == [SafetyRule.grantMismatch])
        #expect(twice.undecidedGrants == 1)
    }

    @Test func aClientWhoseNodeDiedGoesOnThroughAnotherNode() {
        // p's node dies with the leader: its connection ends without the failover release,
        // and it comes back as p2 on another node, already in term 20.
        let doctored =
            Self.history.prefix { $0 != "p: RELEASED load h1 reason=failover owner=c1 fence=1001" }
            + ["obs: RELEASED load h1 reason=failover owner=c1 fence=1001"]
            + Self.snapshot("obs", seq: 0, fence: 2000, members: 1, term: 20)
            + ["p2: WELCOME session=s4 name=c1 proto=1", "p2: OK HELLO name=c1 session=s4 role=admin"]
            + Self.snapshot("p2", seq: 0, fence: 2000, members: 2, term: 20)
            + [
                "p2: JOINED load name=c1 session=s4 seq=1", "obs: JOINED load name=c1 session=s4 seq=1",
                "p2: GRANTED load b1 fence=2001",
                "p2: PRESSED load b1 owner=c1 session=s4 fence=2001 seq=2",
                "obs: PRESSED load b1 owner=c1 session=s4 fence=2001 seq=2",
            ]
        let checker = HistoryScript.check(doctored)
        #expect(checker.violations.isEmpty, "\(checker.violations)")
    }

    @Test func aSnapshotOfAnOlderTermAfterANewerOneIsCaught() {
        var doctored = Self.history
        doctored += Self.snapshot("obs", seq: 7, fence: 1001, members: 2, term: 10)
        #expect(HistoryScript.broken(doctored).contains(.failover))
    }

    /// A waiter's own `DEQUEUED ... reason=failover` (no seq) is outside the chain, like the
    /// failover release; the same line with a seq out of order is still a gap.
    @Test func aWaitersFailoverDequeueIsOutsideTheChain() {
        var lines = Array(Self.history.prefix { $0 != "p: RELEASED load h1 reason=failover owner=c1 fence=1001" })
        let failover = Array(Self.history.drop { $0 != "p: RELEASED load h1 reason=failover owner=c1 fence=1001" })
        lines += ["p: RELEASED load h1 reason=failover owner=c1 fence=1001", "p: DEQUEUED load b1 name=c1 session=s2 position=1 reason=failover"]
        lines += failover.dropFirst()
        #expect(HistoryScript.check(lines).violations.isEmpty, "\(HistoryScript.check(lines).violations)")
        lines.insert("obs: DEQUEUED load b1 name=c1 session=s2 position=1 reason=failover seq=9", at: lines.count - 1)
        #expect(HistoryScript.check(lines).violations.contains { $0.rule == .seqGap }, "\(HistoryScript.check(lines).violations)")
    }
}
