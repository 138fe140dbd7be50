/// The arbiter of one panel: the server-side `ExclusiveButtonState`.
///
/// Pure and deterministic: it is given every command with `now` and appends what it
/// decided to a `PanelOutput`; it never reads a clock and never touches a socket. One
/// instance is owned by one serial queue, which is what makes a panel's decisions a
/// total order.
///
/// The seed report on exclusive buttons reset its state on a timer after the action and
/// decided on touch-up, so two fingers landing together both lit up. Here a group is
/// taken at touch-down (`DOWN`), by exactly one grant, and freed only by an ending of
/// that grant.
public struct PanelCore: Sendable {
    public let config: PanelConfig
    /// Group index of every button.
    let groupIndex: [Int]
    public let groupCount: Int
    /// Per group: its name and policy.
    let groupNames: [String]
    let policies: [GroupPolicy]
    /// Whether any group is not `exclusive` (the common panel skips all queue work).
    public let hasFairGroups: Bool
    /// The live grant of every group.
    var grants: [Grant?]
    /// Per group: who waits for a `queue` group, in arrival order.
    var queues: [[Waiter]]
    /// Per group: the round of a `buzzer` group.
    var rounds: [BuzzerRound]
    /// A queue's hand-off takes a fence only up to this one (the server sets what its
    /// journal has made durable); past it the head waits, and is granted on the next
    /// call that finds a fence for it.
    public var fenceLimit: UInt64 = .max
    /// A hand-off waits for a fence.
    var handOffPending = false
    /// Per button, each session's last grant that ended without its own UP/CANCEL.
    var ended: [[SessionID: EndedGrant]]
    var memberNames: [SessionID: String] = [:]
    /// Joins and leaves counted for the next `PRESENCE` (panels above
    /// `config.presenceSummaryAbove` members).
    var presence = PresenceTally()
    /// No live grant (or press waiting for its decision window) has a deadline before
    /// this; may be early, never late.
    var earliestDeadline: Instant?
    /// Buzzer presses given to the core so far: the order among equal arrivals.
    var pressOrder: UInt64 = 0
    /// Waiting presses are being ranked: what they run meanwhile ranks nothing more.
    var rankingWaiting = false
    /// Buzzer presses ranked behind a press that arrived after them: read later than
    /// their group's decision window allowed for (a metric).
    public internal(set) var lateArrivals: UInt64 = 0

    /// The last fence handed out (what a snapshot reports).
    public internal(set) var lastFence: UInt64
    /// Fences up to this one may have been handed out before a restart without a record
    /// of it: the next grant goes above it.
    let fenceFloor: UInt64
    public internal(set) var seq: UInt64 = 0
    /// Cluster mode: the term this core decides in, reported by its snapshots.
    public var term: Int64?
    /// Every press that arrived by this time has been given to the core (the host read
    /// all its sockets through it): a waiting buzzer press that arrived by then is ranked
    /// before its window ends. Set by the host; nil, the window alone decides.
    public var readThrough: Instant?

    /// - Parameters:
    ///   - lastFence: the highest fence the journal shows handed out for this panel.
    ///   - fenceFloor: the highest fence reserved in it, so fences keep increasing across
    ///     restarts, also past grants whose records a crash lost.
    public init(config: PanelConfig, lastFence: UInt64 = 0, fenceFloor: UInt64 = 0) {
        self.config = config
        var groups: [String: Int] = [:]
        var groupOf: [Int] = []
        var names: [String] = []
        for button in config.buttons {
            let g = groups[button.group] ?? groups.count
            if g == names.count { names.append(button.group) }
            groups[button.group] = g
            groupOf.append(g)
        }
        self.groupNames = names
        self.policies = names.map { config.policy(ofGroup: $0) }
        self.hasFairGroups = policies.contains { $0 != .exclusive }
        self.queues = Array(repeating: [], count: names.count)
        self.rounds = Array(repeating: BuzzerRound(), count: names.count)
        self.groupIndex = groupOf
        self.groupCount = groups.count
        self.grants = Array(repeating: nil, count: groups.count)
        self.ended = Array(repeating: [:], count: config.buttons.count)
        self.lastFence = lastFence
        self.fenceFloor = fenceFloor
    }

    /// The highest fence that may have been handed out: the next grant takes one above.
    /// At UInt64.max the panel has no fence left and must not grant (the host refuses).
    public var highestFence: UInt64 { max(lastFence, fenceFloor) }

    /// The fence the next grant will take.
    public var nextFence: UInt64 { highestFence + 1 }

    public var memberCount: Int { memberNames.count }

    /// When the core next needs to be woken; a wake-up is only a hint, `advance`
    /// re-checks against the time it is given.
    public var nextDeadline: Instant? { earliestDeadline }

    /// The earliest buzzer press waiting: once `readThrough` reaches it, `advance` ranks it.
    public var earliestWaitingArrival: Instant? { rounds.lazy.compactMap { $0.pending.first?.arrival }.min() }

    // MARK: Commands

    /// `arrival` is when the command's bytes arrived, by the same clock as `now` (the
    /// time they were read, which it is when nil): buzzer presses are ranked by it.
    /// `address` is where the session's client connects from, for `Player`.
    public mutating func handle(
        _ request: PanelRequest, session: SessionID, name: String, access: Access,
        now: Instant, arrival: Instant? = nil, address: String = "", into out: inout PanelOutput
    ) {
        if handOffPending, nextFence <= fenceLimit { resumeHandOffs(now: now, into: &out) }
        switch request {
        case .join:
            join(session: session, name: name, access: access, now: now, into: &out)
        case .leave:
            advance(to: now, into: &out)
            out.append(.reply(.left))
            if hasFairGroups { dequeueEverywhere(session, reason: .leave, into: &out) }
            if let leftName = memberNames.removeValue(forKey: session) { tellLeft(leftName, session, now: now, into: &out) }
        case .press(let press):
            let b = press.button
            guard b >= 0, b < config.buttons.count else {
                return out.append(.reply(config.unknownButtonReply(press.verb, id: "#\(b)", access: access)))
            }
            switch press.verb {
            case .down:
                let origin = PressOrigin(arrival: arrival ?? now, address: address)
                down(b, session: session, name: name, access: access, now: now, origin: origin, into: &out)
            case .up: release(.up, b, fence: press.fence, session: session, access: access, now: now, into: &out)
            case .cancel: release(.cancel, b, fence: press.fence, session: session, access: access, now: now, into: &out)
            // `Press` is never made with another verb.
            case .hello, .help, .panels, .join, .leave, .history, .ping, .quit, .reset, .arm, .kick, .ranking: break
            }
        case .unknownButton(let verb, let id):
            out.append(.reply(config.unknownButtonReply(verb, id: id, access: access)))
        case .reset:
            guard access >= .admin else {
                return out.append(.reply(.error(.forbidden, "RESET needs the admin key of panel \(config.id)")))
            }
            advance(to: now, into: &out)
            out.append(.reply(.reset))
            endAll(reason: .reset, now: now, into: &out)
        case .arm(let group):
            arm(group, access: access, now: now, into: &out)
        case .ranking(let group):
            ranking(group, access: access, into: &out)
        }
    }

    /// Releases what `session` owns (`reason=disconnect`) and removes it from the members.
    public mutating func disconnect(session: SessionID, now: Instant, into out: inout PanelOutput) {
        abandon(session: session, now: now, into: &out)
        if let leftName = memberNames.removeValue(forKey: session) { tellLeft(leftName, session, now: now, into: &out) }
    }

    /// A member left: named while the panel had at most `presenceSummaryAbove` members
    /// with it, counted for the next `PRESENCE` above that.
    private mutating func tellLeft(_ name: String, _ session: SessionID, now: Instant, into out: inout PanelOutput) {
        guard memberNames.count >= config.presenceSummaryAbove else { return emit(.left(name: name, session: session), into: &out) }
        noteDeadline(presence.count(joined: false, now: now))
    }

    /// Releases what `session` owns and takes it out of every line, as `disconnect` does,
    /// but leaves it a member (cluster mode: its node's link to the leader dropped, and the
    /// node, still alive, joins its members again; a LEFT and a JOINED for each of them
    /// would reach every member of the panel, on every link drop).
    public mutating func abandon(session: SessionID, now: Instant, into out: inout PanelOutput) {
        advance(to: now, into: &out)
        // Out of every line first, so a group it owns is not handed back to it.
        if hasFairGroups {
            dequeueEverywhere(session, reason: .disconnect, into: &out)
            forgetWaitingPresses(of: session)
        }
        for g in 0..<groupCount {
            if let grant = grants[g], grant.owner.session == session {
                end(group: g, reason: .disconnect, now: now, into: &out)
            }
        }
        for b in ended.indices where !ended[b].isEmpty {
            ended[b].removeValue(forKey: session)
        }
    }

    /// Releases every button with `reason=shutdown`.
    public mutating func shutdown(now: Instant, into out: inout PanelOutput) {
        advance(to: now, into: &out)
        endAll(reason: .shutdown, now: now, into: &out)
    }

    /// The state at `now`, as a JOIN shows it. Call after `advance(to:)`.
    public func snapshot(at now: Instant) -> PanelSnapshot {
        var buttons: [ButtonSnapshot] = []
        buttons.reserveCapacity(config.buttons.count)
        for b in config.buttons.indices {
            let grant = grants[groupIndex[b]]
            guard let grant else {
                buttons.append(ButtonSnapshot(button: b, state: .idle, owner: nil, permille: 0))
                continue
            }
            var permille = 0
            if grant.button == b, case .hold(let clock) = grant.phase {
                permille = min(clock.permille(at: now), 999)
            }
            buttons.append(
                ButtonSnapshot(
                    button: b, state: grant.button == b ? .pressed : .locked,
                    owner: grant.owner.name, permille: permille, ownerSession: grant.owner.session))
        }
        return PanelSnapshot(
            buttons: buttons, members: memberNames.count, fence: lastFence, seq: seq,
            groups: hasFairGroups ? groupSnapshots() : [], term: term)
    }

    /// Every live grant, by group order: what a failover ends without deciding.
    public var liveGrants: [(button: Int, owner: Owner)] {
        grants.compactMap { $0.map { ($0.button, $0.owner) } }
    }

    // MARK: Time

    /// Performs everything the clock owes up to `now`, earliest deadline first.
    public mutating func advance(to now: Instant, into out: inout PanelOutput) {
        if handOffPending, nextFence <= fenceLimit { resumeHandOffs(now: now, into: &out) }
        if hasFairGroups, readThrough != nil { rankDuePresses(at: now, into: &out) }
        guard let earliest = earliestDeadline, earliest <= now else { return }
        if hasFairGroups { rankDuePresses(at: now, into: &out) }
        // Each step either ends a grant or moves its deadline past `now`, except a talk
        // that starts and times out in the same late tick: two steps. Bounded anyway.
        var budget = 2 * groupCount + 2
        while budget > 0 {
            budget -= 1
            var due: Int?
            var dueAt = now
            for g in 0..<groupCount {
                if let d = grants[g]?.deadline, d <= dueAt, due == nil || d < dueAt {
                    due = g
                    dueAt = d
                }
            }
            guard let g = due else { break }
            step(group: g, now: now, into: &out)
        }
        if let counts = presence.take(at: now) {
            emit(.presence(members: memberNames.count, joined: counts.joined, left: counts.left), into: &out)
        }
        recomputeEarliestDeadline()
    }

    private mutating func step(group g: Int, now: Instant, into out: inout PanelOutput) {
        guard var grant = grants[g] else { return }
        switch grant.phase {
        case .tap:
            end(group: g, reason: .timeout, now: now, into: &out)
        case .hold(var clock):
            let step = clock.step(at: now)
            grant.phase = .hold(clock)
            grants[g] = grant
            if step.midway { emit(.midway(button: grant.button), into: &out) }
            if let permille = step.progressPermille {
                emit(.progress(button: grant.button, permille: permille), into: &out)
            }
            if step.completed { complete(group: g, now: now, into: &out) }
        case .talk(var clock):
            if clock.startIfDue(at: now) {
                grant.phase = .talk(clock)
                grants[g] = grant
                emit(.started(button: grant.button, owner: grant.owner), into: &out)
            } else if clock.timedOut(at: now) {
                end(group: g, reason: .timeout, now: now, into: &out)
            }
        }
    }

    /// A hold reached `holdMs`: the completion events, with nothing in between.
    mutating func complete(group g: Int, now: Instant, into out: inout PanelOutput) {
        guard let grant = grants[g] else { return }
        emit(.progress(button: grant.button, permille: 1000), into: &out)
        emit(.fired(button: grant.button, owner: grant.owner), into: &out)
        finish(group: g, grant: grant, reason: .fired, now: now, into: &out)
    }

    private mutating func recomputeEarliestDeadline() {
        var earliest = presence.dueAt
        for g in 0..<groupCount {
            if let d = grants[g]?.deadline, earliest == nil || d < earliest! { earliest = d }
            if hasFairGroups, let d = pendingDue(group: g), earliest == nil || d < earliest! { earliest = d }
        }
        earliestDeadline = earliest
    }

    mutating func noteDeadline(_ d: Instant?) {
        guard let d else { return }
        if earliestDeadline == nil || d < earliestDeadline! { earliestDeadline = d }
    }
}

extension PanelCore {
    func groupOf(_ button: Int) -> Int { groupIndex[button] }

    func grantOf(group g: Int) -> Grant? { grants[g] }

    func endedGrant(button b: Int, session: SessionID) -> EndedGrant? {
        ended[b].isEmpty ? nil : ended[b][session]
    }

    /// The session's release of an ended grant was answered `ended=`: that is its one
    /// answer, as a release of one's own grant is, and a later one is `not-owner`.
    mutating func forgetEnded(button b: Int, session: SessionID) {
        ended[b].removeValue(forKey: session)
    }

    /// Each session's last grant of each button that ended without its own release, as
    /// `endedGrant` reads them: what a cluster node that stops deciding keeps for its own
    /// sessions, whose late `UP` the next leader could not answer `ended=`.
    public var endedGrants: [(button: Int, session: SessionID, fence: UInt64, reason: ReleaseReason)] {
        ended.indices.flatMap { b in ended[b].map { (b, $0.key, $0.value.fence, $0.value.reason) } }
    }

    /// Appends an event with the panel's next seq.
    mutating func emit(_ kind: PanelEvent.Kind, into out: inout PanelOutput) {
        seq += 1
        out.append(.event(PanelEvent(seq: seq, kind: kind)))
    }

    /// Takes the group of `button` for `session` with the next fence.
    mutating func newGrant(button b: Int, session: SessionID, name: String, now: Instant) -> Grant {
        lastFence = nextFence
        let button = config.buttons[b]
        let phase: Grant.Phase
        switch button.kind {
        case .tap:
            phase = .tap(timeoutAt: button.timeoutMs > 0 ? now + button.timeoutMs : nil)
        case .hold:
            phase = .hold(HoldClock(since: now, holdMs: button.holdMs, progressMs: button.progressMs))
        case .talk:
            phase = .talk(
                TalkClock(
                    since: now, longMs: button.longMs, timeoutMs: button.timeoutMs, minTalkMs: button.minTalkMs))
        }
        let grant = Grant(owner: Owner(name: name, session: session, fence: lastFence), button: b, phase: phase)
        grants[groupOf(b)] = grant
        noteDeadline(grant.deadline)
        return grant
    }

    /// Ends the group's grant for `reason`, with the kind's closing events first.
    mutating func end(group g: Int, reason: ReleaseReason, now: Instant, into out: inout PanelOutput) {
        guard let grant = grants[g] else { return }
        if case .talk(let clock) = grant.phase {
            if clock.startedAt != nil {
                switch reason {
                case .up, .timeout:
                    let held = clock.heldMs(at: now, timedOut: reason == .timeout)
                    emit(
                        .stopped(
                            button: grant.button, owner: grant.owner, heldMs: held,
                            discarded: clock.isDiscarded(heldMs: held), reason: reason), into: &out)
                case .cancel, .disconnect, .reset, .shutdown, .fired, .failover:
                    emit(.cancelled(button: grant.button, owner: grant.owner), into: &out)
                }
            } else if reason == .up {
                emit(.tapped(button: grant.button, owner: grant.owner), into: &out)
            }
        }
        finish(group: g, grant: grant, reason: reason, now: now, into: &out)
    }

    /// Frees the group and broadcasts RELEASED.
    mutating func finish(group g: Int, grant: Grant, reason: ReleaseReason, now: Instant, into out: inout PanelOutput) {
        grants[g] = nil
        switch reason {
        case .up, .cancel:
            // The owner let go itself: nothing to tell it later (and an older end of
            // its is no longer its last). The common case touches no table at all.
            if !ended[grant.button].isEmpty { ended[grant.button].removeValue(forKey: grant.owner.session) }
        case .timeout, .disconnect, .fired, .reset, .shutdown, .failover:
            ended[grant.button][grant.owner.session] = EndedGrant(fence: grant.owner.fence, reason: reason)
        }
        emit(.released(button: grant.button, reason: reason, owner: grant.owner), into: &out)
        if hasFairGroups, !queues[g].isEmpty, reason != .reset, reason != .shutdown { handOff(group: g, now: now, into: &out) }
    }

    mutating func endAll(reason: ReleaseReason, now: Instant, into out: inout PanelOutput) {
        // Presses that arrived before it are ranked before it. The lines are emptied
        // first: a reset or shutdown hands nothing on.
        if hasFairGroups {
            for g in 0..<groupCount { rankWaitingPresses(group: g, now: now, into: &out) }
            clearFairGroups(reason: reason == .reset ? .reset : .shutdown, into: &out)
        }
        for g in 0..<groupCount where grants[g] != nil {
            end(group: g, reason: reason, now: now, into: &out)
        }
    }
}
