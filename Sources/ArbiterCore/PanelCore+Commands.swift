extension PanelCore {
    mutating func join(session: SessionID, name: String, access: Access, now: Instant, into out: inout PanelOutput) {
        guard access >= .view else {
            return out.append(.reply(.error(.forbidden, "JOIN needs the view key of panel \(config.id)")))
        }
        advance(to: now, into: &out)
        let isNew = memberNames.updateValue(name, forKey: session) == nil
        var joined = snapshot(at: now)
        guard isNew, memberNames.count > config.presenceSummaryAbove else {
            out.append(.reply(.joined(joined)))
            if isNew { emit(.joined(name: name, session: session), into: &out) }
            return
        }
        joined.joiner = PanelSnapshot.Joiner(name: name, session: session)
        out.append(.reply(.joined(joined)))
        noteDeadline(presence.count(joined: true, now: now))
    }

    mutating func down(
        _ b: Int, session: SessionID, name: String, access: Access, now: Instant, origin: PressOrigin, into out: inout PanelOutput
    ) {
        guard access >= .press else {
            return out.append(.reply(.deniedForbidden(buttonID: config.buttons[b].id)))
        }
        advance(to: now, into: &out)
        let g = groupOf(b)
        if hasFairGroups, fairDown(b, group: g, session: session, name: name, access: access, now: now, origin: origin, into: &out) { return }
        if let grant = grantOf(group: g) {
            if grant.owner.session == session, grant.button == b {
                // Idempotent: a repeated DOWN (a retry, a second finger on the same
                // button) confirms the grant and changes nothing.
                out.append(.reply(.granted(button: b, fence: grant.owner.fence)))
            } else {
                out.append(.reply(.deniedBusy(button: b, owner: grant.owner.name, ownerSession: grant.owner.session, active: grant.button)))
            }
            return
        }
        let grant = newGrant(button: b, session: session, name: name, now: now)
        out.append(.reply(.granted(button: b, fence: grant.owner.fence)))
        emit(.pressed(button: b, owner: grant.owner), into: &out)
        if config.buttons[b].kind == .tap {
            emit(.fired(button: b, owner: grant.owner), into: &out)
        }
    }

    mutating func release(
        _ verb: PanelReply.ReleaseVerb, _ b: Int, fence: UInt64?, session: SessionID,
        access: Access, now: Instant, into out: inout PanelOutput
    ) {
        guard access >= .press else {
            return out.append(.reply(.error(.forbidden, "\(verb.rawValue) needs the press key of panel \(config.id)")))
        }
        func id() -> String { config.buttons[b].id }
        let g = groupOf(b)
        // A hold that already lasted hold_ms fires on this UP even if its timer tick is
        // late; the reply comes first, then the completion events (PROTOCOL.md 6).
        if let grant = grantOf(group: g), grant.button == b, grant.owner.session == session,
            fence == nil || fence == grant.owner.fence,
            case .hold(let clock) = grant.phase, clock.isComplete(at: now)
        {
            out.append(.reply(.released(verb: verb, button: b, ended: nil)))
            advance(to: now, into: &out)
            return
        }
        advance(to: now, into: &out)
        if hasFairGroups, waitBehindPress(verb == .up ? .up : .cancel, b, group: g, fence: fence, session: session, access: access, now: now, into: &out) {
            return
        }
        // Letting go while waiting in line: out of the line. With a fence it is about a
        // grant, and a late release never touches what the session does now.
        if hasFairGroups, fence == nil,
            leaveQueue(b, group: g, session: session, reason: verb == .up ? .up : .cancel, reply: .released(verb: verb, button: b, ended: nil), into: &out)
        {
            return
        }
        let current = grantOf(group: g).flatMap { $0.button == b ? $0 : nil }
        if let fence {
            if let current, current.owner.fence == fence {
                // fall through to the ownership check
            } else if current == nil, let ownEnded = endedGrant(button: b, session: session), ownEnded.fence == fence {
                forgetEnded(button: b, session: session)
                return out.append(.reply(.released(verb: verb, button: b, ended: ownEnded.reason)))
            } else {
                let now = current.map { "the current grant is fence=\($0.owner.fence)" } ?? "\(id()) is not held"
                return out.append(.reply(.error(.staleFence, "fence=\(fence) is not the current grant of \(id()): \(now)")))
            }
        }
        if let current, current.owner.session == session {
            out.append(.reply(.released(verb: verb, button: b, ended: nil)))
            end(group: g, reason: verb == .up ? .up : .cancel, now: now, into: &out)
        } else if let ownEnded = endedGrant(button: b, session: session) {
            forgetEnded(button: b, session: session)
            out.append(.reply(.released(verb: verb, button: b, ended: ownEnded.reason)))
        } else if let current {
            out.append(.reply(.error(.notOwner, "\(id()) is held by \(current.owner.name), not by you")))
        } else {
            out.append(.reply(.error(.notOwner, "\(id()) is not held by you")))
        }
    }
}

/// `queue` groups: a DOWN on a busy group waits in line instead of failing, and the head
/// is granted the moment the owner lets go, with its own new fence.
extension PanelCore {
    /// A DOWN on a queue or buzzer group, if its policy decides it; false for an
    /// exclusive group, or a free queue group, which the ordinary rules grant. Not
    /// inlined: the press path of an exclusive group stays as small as it was.
    @inline(never)
    mutating func fairDown(
        _ b: Int, group g: Int, session: SessionID, name: String, access: Access, now: Instant, origin: PressOrigin,
        into out: inout PanelOutput
    ) -> Bool {
        switch policies[g] {
        case .exclusive:
            return false
        case .queue(let maxQueue):
            return queueDown(b, group: g, maxQueue: maxQueue, session: session, name: name, into: &out)
        case .buzzer(let lockoutMs, _, _):
            buzzerDown(b, group: g, lockoutMs: lockoutMs, session: session, name: name, access: access, now: now, origin: origin, into: &out)
            return true
        }
    }

    /// Handles a DOWN on a queue group when it is busy; false when the group is free
    /// (or busy with the requester itself) and the ordinary rules apply.
    mutating func queueDown(
        _ b: Int, group g: Int, maxQueue: Int, session: SessionID, name: String,
        into out: inout PanelOutput
    ) -> Bool {
        guard let grant = grants[g], grant.owner.session != session else { return false }
        if let i = queues[g].firstIndex(where: { $0.session == session }) {
            // Already waiting: the same button again is a retry, and it keeps its place.
            if queues[g][i].button == b {
                out.append(.reply(.queued(button: b, position: i + 1, owner: grant.owner.name)))
            } else {
                out.append(.reply(.deniedBusy(button: b, owner: grant.owner.name, ownerSession: grant.owner.session, active: grant.button)))
            }
            return true
        }
        guard queues[g].count < maxQueue else {
            out.append(.reply(.denied(button: b, reason: .queueFull)))
            return true
        }
        queues[g].append(Waiter(session: session, name: name, button: b))
        let position = queues[g].count
        out.append(.reply(.queued(button: b, position: position, owner: grant.owner.name)))
        emit(.queued(button: b, name: name, session: session, position: position), into: &out)
        return true
    }

    /// Takes `session` out of the line of group `g` if it waits there on button `b`.
    mutating func leaveQueue(
        _ b: Int, group g: Int, session: SessionID, reason: DequeueReason,
        reply: PanelReply, into out: inout PanelOutput
    ) -> Bool {
        guard !queues[g].isEmpty, let i = queues[g].firstIndex(where: { $0.session == session && $0.button == b }) else {
            return false
        }
        out.append(.reply(reply))
        dequeue(group: g, at: i, reason: reason, into: &out)
        return true
    }

    mutating func dequeue(group g: Int, at i: Int, reason: DequeueReason, into out: inout PanelOutput) {
        let w = queues[g].remove(at: i)
        emit(.dequeued(button: w.button, name: w.name, session: w.session, position: i + 1, reason: reason), into: &out)
    }

    mutating func dequeueEverywhere(_ session: SessionID, reason: DequeueReason, into out: inout PanelOutput) {
        for g in 0..<groupCount where !queues[g].isEmpty {
            if let i = queues[g].firstIndex(where: { $0.session == session }) {
                dequeue(group: g, at: i, reason: reason, into: &out)
            }
        }
    }

    /// The group was just freed: its head is granted now, and only the head is told.
    mutating func handOff(group g: Int, now: Instant, into out: inout PanelOutput) {
        guard nextFence <= fenceLimit else {
            handOffPending = true
            return
        }
        let head = queues[g].removeFirst()
        let grant = newGrant(button: head.button, session: head.session, name: head.name, now: now)
        out.append(.notice(head.session, .granted(button: head.button, fence: grant.owner.fence)))
        emit(.pressed(button: head.button, owner: grant.owner), into: &out)
        if config.buttons[head.button].kind == .tap {
            emit(.fired(button: head.button, owner: grant.owner), into: &out)
        }
    }

    /// Hands every free queue group with a line to its head, as far as fences allow:
    /// the hand-offs that waited for a durable fence.
    mutating func resumeHandOffs(now: Instant, into out: inout PanelOutput) {
        handOffPending = false
        for g in 0..<groupCount where grants[g] == nil && !queues[g].isEmpty {
            handOff(group: g, now: now, into: &out)
        }
    }

    /// RESET or shutdown: every line is emptied, every round closed.
    mutating func clearFairGroups(reason: DequeueReason, into out: inout PanelOutput) {
        for g in 0..<groupCount {
            while !queues[g].isEmpty { dequeue(group: g, at: queues[g].count - 1, reason: reason, into: &out) }
            if rounds[g].state != .closed {
                rounds[g].close()
                if reason == .reset { emit(.closed(group: groupNames[g]), into: &out) }
            }
        }
    }

    func groupSnapshots() -> [GroupSnapshot] {
        var result: [GroupSnapshot] = []
        for g in 0..<groupCount {
            switch policies[g] {
            case .exclusive:
                continue
            case .queue:
                let waiting = queues[g].enumerated().map {
                    WaitingSnapshot(button: $1.button, name: $1.name, session: $1.session, position: $0 + 1)
                }
                result.append(GroupSnapshot(group: groupNames[g], policy: policies[g], waiting: waiting))
            case .buzzer:
                result.append(
                    GroupSnapshot(
                        group: groupNames[g], policy: policies[g],
                        round: rounds[g].state, ranking: rounds[g].state == .closed ? [] : rounds[g].ranking))
            }
        }
        return result
    }
}

/// `buzzer` groups: ARM opens a round, the first DOWN wins as a tap, later ones are
/// ranked by their arrival after the winner's; a press while closed is early and locks
/// its session out for a while.
extension PanelCore {
    mutating func arm(_ group: String, access: Access, now: Instant, into out: inout PanelOutput) {
        guard access >= .admin else {
            return out.append(.reply(.error(.forbidden, "ARM needs the admin key of panel \(config.id)")))
        }
        guard let g = buzzerGroup(group, into: &out) else { return }
        advance(to: now, into: &out)
        out.append(.reply(.armed(group: group)))
        // Presses that arrived before it are ranked in the round they were for.
        rankWaitingPresses(group: g, now: now, into: &out)
        // The next ARM ends the round: a winner still holding lets go, as on RESET.
        if grants[g] != nil { end(group: g, reason: .reset, now: now, into: &out) }
        rounds[g].open(at: now)
        emit(.armed(group: group), into: &out)
    }

    /// `RANKING`: the round's state and every ranked press, of the open round or, when
    /// closed, of the last one (kept until the next ARM).
    func ranking(_ group: String, access: Access, into out: inout PanelOutput) {
        guard access >= .view else {
            return out.append(.reply(.error(.forbidden, "RANKING needs the view key of panel \(config.id)")))
        }
        guard let g = buzzerGroup(group, into: &out) else { return }
        out.append(.reply(.ranking(group: group, round: rounds[g].state, ranking: rounds[g].ranking)))
    }

    /// The index of buzzer group `group`, or nil after an `ERROR no-such-group` naming the
    /// panel's buzzer groups.
    func buzzerGroup(_ group: String, into out: inout PanelOutput) -> Int? {
        if let g = groupNames.firstIndex(of: group), case .buzzer = policies[g] { return g }
        let buzzers = (0..<groupCount).filter { if case .buzzer = policies[$0] { true } else { false } }.map { groupNames[$0] }
        let known = buzzers.isEmpty ? "it has none" : "its buzzer groups: " + buzzers.joined(separator: ", ")
        out.append(.reply(.error(.noSuchGroup, "panel \(config.id) has no buzzer group \(group) (\(known))")))
        return nil
    }

    mutating func buzzerDown(
        _ b: Int, group g: Int, lockoutMs: Int64, session: SessionID, name: String, access: Access, now: Instant,
        origin: PressOrigin, into out: inout PanelOutput
    ) {
        if waitBehindPress(.down, b, group: g, fence: nil, session: session, access: access, now: now, into: &out) { return }
        let player = Player(name: name, address: origin.address)
        if rounds[g].isLockedOut(session, player, at: now) {
            return out.append(.reply(.denied(button: b, reason: .lockedOut)))
        }
        // Arrived before the ARM was read (and decided after it, read late by another
        // reactor): nobody could have seen the round open, so it is early.
        if rounds[g].state == .closed || origin.arrival < (rounds[g].openedAt ?? origin.arrival) {
            if lockoutMs > 0 { rounds[g].lockOut(session, player, until: now + lockoutMs) }
            return out.append(.reply(.denied(button: b, reason: .early)))
        }
        if let grant = grants[g], grant.owner.session == session, grant.button == b {
            return out.append(.reply(.granted(button: b, fence: grant.owner.fence)))
        }
        if let mine = rounds[g].ranking.first(where: { $0.session == session }) {
            // One place per session and round: pressing again changes nothing.
            return out.append(.reply(.ranked(button: b, rank: mine.rank, afterMicroseconds: mine.afterMicroseconds)))
        }
        pressOrder += 1
        let order = pressOrder
        let arrival = min(origin.arrival, now)
        rounds[g].enqueue(PendingPress(button: b, session: session, name: name, arrival: arrival, readAt: now, order: order))
        noteDeadline(pendingDue(group: g))
        rankDuePresses(group: g, at: now, current: order, into: &out)
        // Still waiting: its reply comes once it is ranked.
        if rounds[g].pending.contains(where: { $0.order == order }) { out.deferReply() }
    }

    /// A DOWN, UP or CANCEL of a session whose DOWN in group `g` waits for its decision
    /// window: it waits behind it, to be run once that press is ranked, as if it had been
    /// ranked at once. False when the session has no press waiting there.
    mutating func waitBehindPress(
        _ verb: Verb, _ b: Int, group g: Int, fence: UInt64?, session: SessionID, access: Access, now: Instant,
        into out: inout PanelOutput
    ) -> Bool {
        guard case .buzzer = policies[g], let i = rounds[g].pendingIndex(of: session) else { return false }
        rounds[g].pending[i].followUps.append(.init(verb: verb, button: b, fence: fence, access: access, readAt: now))
        out.deferReply()
        return true
    }

    /// Buzzer presses ranked once read through, and at the end of their window (with a
    /// `readThrough` given), over every round so far.
    public var rankedBy: (readThrough: UInt64, window: UInt64) { rounds.reduce((0, 0)) { ($0.0 + $1.rankedReadThrough, $0.1 + $1.rankedAtWindow) } }

    /// When the group's earliest waiting press is due to be ranked.
    func pendingDue(group g: Int) -> Instant? {
        guard case .buzzer(_, _, let windowUs) = policies[g] else { return nil }
        return rounds[g].nextDue(windowUs: windowUs, readThroughKnown: readThrough != nil)
    }

    /// Ranks every press whose decision window has passed at `now`, in every group.
    mutating func rankDuePresses(at now: Instant, into out: inout PanelOutput) {
        for g in 0..<groupCount where !rounds[g].pending.isEmpty {
            rankDuePresses(group: g, at: now, current: nil, into: &out)
        }
    }

    /// Ranks the group's presses whose decision window has passed at `now`, earliest
    /// arrival first. The press numbered `current` is the command being run: its reply
    /// is the command's; the others answer their earlier commands.
    mutating func rankDuePresses(group g: Int, at now: Instant, current: UInt64?, into out: inout PanelOutput) {
        guard !rankingWaiting, case .buzzer(_, let announce, let windowUs) = policies[g] else { return }
        rankingWaiting = true
        defer { rankingWaiting = false }
        while let press = rounds[g].takeDue(at: now, windowUs: windowUs, readThrough: readThrough) {
            place(press, group: g, announce: announce, isCurrent: press.order == current, into: &out)
        }
    }

    /// Ranks every press the group has waiting, whatever its window: an ARM, RESET or
    /// shutdown came after them.
    mutating func rankWaitingPresses(group g: Int, now: Instant, into out: inout PanelOutput) {
        guard !rounds[g].pending.isEmpty, !rankingWaiting, case .buzzer(_, let announce, _) = policies[g] else { return }
        rankingWaiting = true
        defer { rankingWaiting = false }
        while !rounds[g].pending.isEmpty {
            place(rounds[g].pending.removeFirst(), group: g, announce: announce, isCurrent: false, into: &out)
        }
    }

    /// A waiting press's turn: the round's winner if it has none, else the next rank; its
    /// reply, then the presses its session sent while it waited.
    private mutating func place(_ press: PendingPress, group g: Int, announce: Int, isCurrent: Bool, into out: inout PanelOutput) {
        let b = press.button
        // Its reply first, as any command's precedes the events it causes.
        func answer(_ reply: PanelReply) {
            if isCurrent { out.append(.reply(reply)) } else if !press.gone { out.append(.answer(press.session, reply)) }
        }
        if rounds[g].state == .armed {
            let grant = newGrant(button: b, session: press.session, name: press.name, now: press.readAt)
            rounds[g].win(button: b, name: press.name, session: press.session, arrival: press.arrival)
            answer(.granted(button: b, fence: grant.owner.fence))
            emit(.pressed(button: b, owner: grant.owner), into: &out)
            emit(.fired(button: b, owner: grant.owner), into: &out)
        } else {
            let (ranked, inOrder) = rounds[g].rank(button: b, name: press.name, session: press.session, arrival: press.arrival)
            if !inOrder { lateArrivals += 1 }
            answer(.ranked(button: b, rank: ranked.rank, afterMicroseconds: ranked.afterMicroseconds))
            // Members hear the places a screen shows; each player has its own reply.
            if ranked.rank <= announce { emit(.buzzed(ranked), into: &out) }
        }
        if press.gone, let grant = grants[g], grant.owner.session == press.session {
            end(group: g, reason: .disconnect, now: press.readAt, into: &out)
            forgetEnded(button: b, session: press.session)
        }
        for followUp in press.followUps {
            var next = PanelOutput()
            handle(followUp.request, session: press.session, name: press.name, access: followUp.access, now: followUp.readAt, into: &next)
            out.append(contentsOf: next, answering: press.session)
        }
    }

    /// A session that disconnected: its waiting presses are still ranked, and answer
    /// nobody; what it sent behind them is dropped.
    mutating func forgetWaitingPresses(of session: SessionID) {
        for g in 0..<groupCount {
            guard let i = rounds[g].pendingIndex(of: session) else { continue }
            rounds[g].pending[i].gone = true
            rounds[g].pending[i].followUps.removeAll()
        }
    }
}
