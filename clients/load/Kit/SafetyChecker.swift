import ArbiterCore

/// Checks everything the generator observed against the protocol's safety rules.
///
/// Fed every message each watched connection received, in the order it received them
/// (`record`); connections may be interleaved in any way. Per connection it checks the
/// seq chain and the order of its own replies and events; across connections it checks
/// that all members saw the same event at each seq; and from the panel's total order,
/// rebuilt one seq at a time, it checks ownership, fences and firing. Memory is bounded
/// by the members' lag, not by the run's length. Not thread-safe: one owner feeds it.
public final class SafetyChecker {
    public let buttons: ButtonTable
    /// Violations kept with their evidence; the rest are only counted.
    public let maxViolations: Int
    /// A buzzer group's `announce`: the places its members are told (`--announce`).
    public var announce = GroupPolicy.defaultAnnounce
    public private(set) var violations: [Violation] = []
    public private(set) var violationCount = 0
    /// Events read by all streams, and how many of them were compared with another
    /// member's event at the same seq.
    public private(set) var eventsChecked = 0
    public private(set) var eventsCompared = 0
    /// The panel's events in its total order, counted by kind (each seq once).
    public internal(set) var orderCounts = [Int](repeating: 0, count: Int(MessageKind.unknown.rawValue) + 1)
    var streams: [CheckedStream] = []
    var window = SeqWindow()
    // The panel model, in seq order.
    var modelStarted = false
    var nextApply: Int64 = 0
    /// Open grants per group: one at most, unless the two-owners rule was broken.
    var open: [[OpenGrant]]
    var lastFence: Int64 = 0
    var lastPressed: (WireMessage, Int32)?
    /// GRANTED replies not yet matched by a PRESSED in the panel order, and PRESSED
    /// events of watched sessions not yet matched by a GRANTED, by fence.
    /// The fence of the snapshot the model (re)started from: a grant at or below it was
    /// made before the model, so its PRESSED is in that snapshot, not in the events.
    var modelStartFence: Int64 = 0
    var unmatchedGrants: [Int64: (WireMessage, Int32)] = [:]
    var unmatchedPresses: [Int64: (WireMessage, Int32)] = [:]
    /// Sessions whose replies the checker reads (their GRANTED must match).
    var watchedSessions: Set<Int64> = []
    /// Per watched session, the commands answered "may or may not have been done" (a
    /// relayed command whose leader died before answering): each may stand for one grant
    /// whose GRANTED never came, as an indeterminate operation does in a Jepsen history.
    var undecided: [Int64: Int] = [:]
    /// PRESSED events without a GRANTED that such an answer accounts for.
    public internal(set) var undecidedGrants = 0
    /// queue: sessions waiting in a line (their QUEUED read, no GRANTED since), and the
    /// fences of hand-offs to them whose GRANTED is not read yet. A hand-off whose grant
    /// ended `reason=disconnect` or `failover` (the leader lost the waiter's node, or the
    /// term ended) may never reach the waiter: its GRANTED went with the link. Each such is
    /// counted (`lostHandOffs`) instead of reported, as an indeterminate answer is.
    var waiting: Set<Int64> = []
    /// The seq of the last event that is not a RELEASED, PRESSED or FIRED (`applyFair`).
    var fairDecisionSeq: Int64 = -1
    var handOffs: Set<Int64> = []
    var handOffsEnded: Set<Int64> = []
    public internal(set) var lostHandOffs = 0
    /// Cluster mode: JOINs again answered by a snapshot past events the member missed
    /// (its node resynchronised it meanwhile; `joined`).
    public internal(set) var joinsPastAGap = 0
    /// The highest seq of a snapshot in which every button was idle.
    var idleSnapshotSeq: Int64 = -1
    var lastMatchedFence: Int64 = 0
    /// Per group: the fair-group model (unused for exclusive groups).
    var fair: [FairGroup]
    /// Cluster mode: the term the model follows, and every term's lowest and highest
    /// fence as read by any member (`SafetyChecker+Failover`).
    var modelTerm: Int64 = 0
    var termFences: [Int64: ClosedRange<Int64>] = [:]
    /// Grants of the model's term ended by a `RELEASED reason=failover` (other members
    /// report the same release).
    var failoverEnded: Set<Int64> = []
    /// Grants of the model's term it saw released, by fence: the seq of that RELEASED. A
    /// member that had not read it yet when its node lost the dying leader is still owed
    /// a failover release for the grant (`SafetyChecker+Failover`). Trimmed to the seqs
    /// some member may not have read.
    var releasedAt: [Int64: Int64] = [:]
    var sinceTrim = 0
    var cachedOldest: Int64 = 0

    public init(buttons: ButtonTable, maxViolations: Int = 50) {
        self.buttons = buttons
        self.maxViolations = maxViolations
        self.open = Array(repeating: [], count: buttons.groupNames.count)
        self.fair = Array(repeating: FairGroup(), count: buttons.groupNames.count)
    }

    /// A new connection to watch; `name` identifies it in violation reports.
    public func addStream(name: String) -> Int {
        streams.append(CheckedStream(name: name))
        return streams.count - 1
    }

    /// The connection is closed; it no longer holds back the window.
    public func closeStream(_ stream: Int) {
        streams[stream].active = false
        // Its replies end with it. And session numbers come back: a node restarted in a
        // cluster numbers its sessions from the same base again, so a later PRESSED of
        // this number may be another client's.
        let session = streams[stream].session
        guard session >= 0 else { return }
        settleUndecided(session)
        watchedSessions.remove(session)
    }

    /// `stream` sent a JOIN after its first: the snapshot that answers it must carry the
    /// seq of the last event before it. A snapshot nobody asked for is a resync.
    public func joinSent(_ stream: Int) {
        if streams[stream].joined { streams[stream].joinsAwaited += 1 }
    }

    /// `stream`'s UP of `button` was answered `ERROR unavailable ... may or may not have
    /// been done` (its answer was lost between nodes): the release may have happened, so
    /// its STOPPED or RELEASED `reason=up` may come before any OK UP (the UP is sent again
    /// and answered `ended=` then).
    public func upUndecided(_ stream: Int, button: Int32) {
        streams[stream].own[button]?.releaseReplied = true
    }

    /// `stream`'s connection was lost with a DOWN unanswered: like `ERROR unavailable ...
    /// may or may not have been done`, it may have been granted (the node decided it, or
    /// relayed it, before the connection went) and have ended with the session.
    public func lostUnanswered(_ stream: Int) {
        let session = streams[stream].session
        if session >= 0 { undecided[session, default: 0] += 1 }
    }

    /// Lets each undecided answer of `session` account for one of its PRESSED events
    /// that never got a GRANTED, the lowest fences first, and forgets the rest: a later
    /// client with the same session number starts with none.
    private func settleUndecided(_ session: Int64) {
        guard var n = undecided.removeValue(forKey: session), n > 0 else { return }
        for fence in unmatchedPresses.keys.sorted() where n > 0 && unmatchedPresses[fence]?.0.session == session {
            unmatchedPresses[fence] = nil
            undecidedGrants += 1
            n -= 1
        }
    }

    /// One message `stream` received, in its order.
    public func record(_ stream: Int, _ m: WireMessage) {
        switch m.kind {
        case .welcome, .okHello:
            if m.session >= 0 { streams[stream].session = m.session }
            if m.kind == .okHello, m.session >= 0 { watchedSessions.insert(m.session) }
        case .button:
            if m.state != .idle { streams[stream].snapshotBusy += 1 }
            if m.state == .pressed, m.button >= 0 { streams[stream].snapshotPressed.append(m.button) }
        case .roundState:
            if m.group >= 0 { streams[stream].snapshotRounds.append((m.group, m.round)) }
        case .rankState:
            if m.button >= 0 { streams[stream].snapshotRanks.append((m.button, m.session, m.rank, m.afterUs)) }
        case .okJoin:
            joined(stream, m)
        case .ranked:
            rankedReply(stream, m)
        case .released where m.reason == .failover:
            failover(stream, m)
        case .okLeave:
            streams[stream].joined = false
        case .error where m.mayHaveBeenDone:
            if streams[stream].session >= 0 { undecided[streams[stream].session, default: 0] += 1 }
        case .granted:
            if m.button >= 0 { streams[stream].own[m.button] = CheckedStream.OwnGrant(fence: m.fence) }
            waiting.remove(streams[stream].session)
            granted(stream, m)
        case .queued:
            if streams[stream].session >= 0 { waiting.insert(streams[stream].session) }
        case .joined where m.seq < 0:
            // A large panel's joiner is told its own JOINED alone, outside the chain,
            // right after its snapshot; nobody else's JOINED ever comes without a seq.
            if m.session != streams[stream].session || !streams[stream].justJoined {
                violate(.seqGap, "a JOINED without seq that is not the joiner's own, right after its snapshot", [describe(stream, m)])
            }
        case .dequeued where m.seq < 0:
            // A waiter's own word that the line went with its term: outside the chain, like
            // the failover release; the new term's snapshot (a member's) starts it afresh.
            waiting.remove(streams[stream].session)
        case .okUp, .okCancel:
            guard m.button >= 0 else { return }
            if m.reason == .none {
                streams[stream].own[m.button]?.releaseReplied = true
            } else {
                // `ended=`: the grant ended on its own before this UP; no event follows.
                streams[stream].own[m.button] = nil
            }
        default:
            if m.kind.isEvent { event(stream, m) }
        }
    }

    private func joined(_ stream: Int, _ m: WireMessage) {
        var s = streams[stream]
        let term = max(0, m.term)
        if s.joined, term != s.term || s.failedOver {
            // A new term's snapshot (after a failover, or a reconnection to a node that
            // already follows the new leader): its seq starts a new chain.
            if !s.failedOver, term < s.term {
                violate(.failover, "snapshot of term \(term) after one of term \(s.term)", [describe(stream, m)])
            }
            s.expected = m.seq + 1
            s.resynced = true
        } else if s.joined, s.joinsAwaited == 0 {
            // A snapshot nobody asked for: the member's node resynchronised it in the same
            // term (a link dropped, frames lost, its lease lapsed). The events it missed
            // are behind the snapshot, and failover releases came first for the grants it
            // knew of that the snapshot no longer shows (none for one that still stands);
            // only a snapshot from before what it has seen is wrong.
            if m.seq < s.expected - 1 {
                let last = s.lastEvent.map { describe(stream, $0) } ?? "\(s.name): (no event yet)"
                violate(.seqGap, "snapshot at seq=\(m.seq) after the event of seq=\(s.expected - 1)", [last, describe(stream, m)])
            }
            s.expected = m.seq + 1
            s.resynced = true
        } else if s.joined, term > 0, m.seq > s.expected - 1 {
            // Cluster mode, a JOIN again whose snapshot is past events the member never
            // read: its node resynchronised it meanwhile (a link to the leader dropped or
            // fell silent, frames were lost), and a member that knew of no grant is told
            // nothing before the snapshot that ends it. With its own JOIN under way it
            // cannot tell that snapshot from its JOIN's answer, nor need it: either is the
            // truth at its seq, which PROTOCOL.md section 5 lets a member reach past a gap.
            // Counted, not a violation; a snapshot from before what was seen still is.
            joinsPastAGap += 1
            s.expected = m.seq + 1
            s.resynced = true
        } else if s.joined {
            // A JOIN again: everything up to the snapshot's seq was sent before it.
            if m.seq != s.expected - 1 {
                let last = s.lastEvent.map { describe(stream, $0) } ?? "\(s.name): (no event yet)"
                violate(
                    .seqGap, "snapshot again at seq=\(m.seq) but the last event seen was seq=\(s.expected - 1)",
                    [last, describe(stream, m)])
                s.expected = m.seq + 1
            }
        } else {
            s.joined = true
            s.expected = m.seq + 1
        }
        s.term = term
        s.failedOver = false
        s.justJoined = true
        if s.joinsAwaited > 0 { s.joinsAwaited -= 1 }
        if !modelStarted {
            modelTerm = term
            startModel(at: m.seq, fence: m.fence, pressed: s.snapshotPressed)
            startRounds(at: m.seq, s.snapshotRounds, s.snapshotRanks)
        } else if term > modelTerm {
            startTerm(term, at: m.seq, fence: m.fence, pressed: s.snapshotPressed)
            startRounds(at: m.seq, s.snapshotRounds, s.snapshotRanks)
        }
        if s.snapshotBusy == 0, term == modelTerm, m.seq > idleSnapshotSeq { idleSnapshotSeq = m.seq }
        s.snapshotBusy = 0
        s.snapshotPressed = []
        s.snapshotRounds = []
        s.snapshotRanks = []
        streams[stream] = s
    }

    private func event(_ stream: Int, _ m: WireMessage) {
        eventsChecked += 1
        guard streams[stream].joined else {
            return violate(.seqGap, "event before the JOIN reply", [describe(stream, m)])
        }
        if m.seq != streams[stream].expected {
            let last = streams[stream].lastEvent.map { describe(stream, $0) } ?? "\(streams[stream].name): OK JOIN seq=\(streams[stream].expected - 1)"
            violate(.seqGap, "expected seq=\(streams[stream].expected), got seq=\(m.seq)", [last, describe(stream, m)])
        }
        if streams[stream].failedOver {
            violate(.failover, "event after RELEASED reason=failover before the new term's snapshot", [describe(stream, m)])
        }
        streams[stream].expected = m.seq + 1
        streams[stream].lastEvent = m
        streams[stream].justJoined = false
        checkOwnOrder(stream, m)
        if m.kind == .pressed { checkTermFence(stream, m) }
        // A member still reading an older term (its node has not heard of the new leader
        // yet): its own chain was checked; the model follows the newest term only.
        guard streams[stream].term == modelTerm else { return }
        if let first = window.entry(m.seq) {
            eventsCompared += 1
            if first.message != m {
                violate(
                    .seqDisagree, "two members saw different events at seq=\(m.seq)",
                    [describe(Int(first.stream), first.message), describe(stream, m)])
            }
        } else if m.seq >= nextApply || !modelStarted {
            window.insert(SeqWindow.Entry(seq: m.seq, message: m, stream: Int32(stream)), oldestNeeded: oldestNeeded)
            applyReady()
        }
    }

    /// The owner's own stream: a reply precedes the events its command causes.
    private func checkOwnOrder(_ stream: Int, _ m: WireMessage) {
        let s = streams[stream]
        guard m.button >= 0 else { return }
        let own = s.own[m.button]
        switch m.kind {
        case .pressed where m.session == s.session && s.session >= 0:
            if own?.fence != m.fence {
                violate(.replyOrder, "PRESSED of this connection's own grant before its GRANTED reply", [describe(stream, m)])
            }
        case .stopped where m.session == s.session && s.session >= 0 && m.reason == .up:
            if own?.fence != m.fence || own?.releaseReplied != true {
                violate(.stoppedBeforeUp, "STOPPED reason=up before the owner's OK UP reply", [describe(stream, m)])
            }
        case .released:
            guard let own, own.fence == m.fence else { return }
            if (m.reason == .up || m.reason == .cancel) && !own.releaseReplied {
                violate(.replyOrder, "RELEASED reason=\(m.reason.word) before the owner's OK reply", [describe(stream, m)])
            }
            streams[stream].own[m.button] = nil
        default:
            break
        }
    }

    /// Checks at the end of the run.
    public func finish() {
        finishRounds()
        // If the model reached a snapshot in which every button was idle, every
        // PRESSED before it must have been RELEASED, and every grant announced.
        guard modelStarted, idleSnapshotSeq >= 0, nextApply - 1 == idleSnapshotSeq else { return }
        for grant in open.joined() where !grant.preexisting {
            violate(
                .pressRelease, "PRESSED never RELEASED, although the snapshot at seq=\(idleSnapshotSeq) shows every button idle",
                [describe(Int(grant.witness), grant.pressed)])
        }
        for (fence, (m, stream)) in unmatchedGrants.sorted(by: { $0.key < $1.key }) {
            violate(.grantMismatch, "GRANTED fence=\(fence) but no member saw its PRESSED", [describe(Int(stream), m)])
        }
        for session in undecided.keys { settleUndecided(session) }
        for fence in handOffsEnded.sorted() where unmatchedPresses.removeValue(forKey: fence) != nil { lostHandOffs += 1 }
        for (fence, (m, stream)) in unmatchedPresses.sorted(by: { $0.key < $1.key }) {
            violate(
                .grantMismatch, "PRESSED fence=\(fence) for session s\(m.session), which never read a GRANTED for it",
                [describe(Int(stream), m)])
        }
        finishFair()
    }

    /// A GRANTED reply: matched against the PRESSED of its fence, whichever comes first.
    private func granted(_ stream: Int, _ m: WireMessage) {
        guard m.button >= 0, m.fence > 0 else { return }
        if !handOffs.isEmpty { handOffs.remove(m.fence) }
        if let (pressed, witness) = unmatchedPresses.removeValue(forKey: m.fence) {
            return compareGrant(stream, m, pressed, witness)
        }
        if let (earlier, _) = unmatchedGrants[m.fence] {
            // DOWN on a button one already owns repeats the same GRANTED.
            if earlier.button != m.button {
                violate(.grantMismatch, "fence=\(m.fence) GRANTED for two buttons", [describe(stream, earlier), describe(stream, m)])
            }
            return
        }
        if m.fence <= lastMatchedFence - 100_000 { return }
        // Made before the snapshot the model started this term from (every member was
        // joining the new term when it was granted): that snapshot shows it, not a PRESSED.
        if modelStarted, m.fence <= modelStartFence { return }
        unmatchedGrants[m.fence] = (m, Int32(stream))
    }

    /// A PRESSED applied in panel order: matched against its GRANTED.
    func pressedApplied(_ m: WireMessage, witness: Int32) {
        if let (grant, stream) = unmatchedGrants.removeValue(forKey: m.fence) {
            return compareGrant(Int(stream), grant, m, witness)
        }
        guard watchedSessions.contains(m.session) else { return }
        unmatchedPresses[m.fence] = (m, witness)
        if waiting.contains(m.session) {
            handOffs.insert(m.fence)
            if handOffs.count > 100_000 { handOffs.removeAll() }
        }
        // A press whose grant reply never comes is reported at the end; a long run
        // keeps only the recent ones.
        if unmatchedPresses.count > 100_000 { unmatchedPresses.removeAll() }
    }

    func describe(_ stream: Int, _ m: WireMessage) -> String {
        "\(streams[stream].name): \(m.describe(buttons))"
    }

    func violate(_ rule: SafetyRule, _ message: String, _ evidence: [String]) {
        violationCount += 1
        if violations.count < maxViolations {
            violations.append(Violation(rule: rule, message: message, evidence: evidence))
        }
    }
}
