/// `queue` groups: a DOWN on a busy group waits in line instead of failing, and the head
/// is granted the moment the owner lets go, with its own new fence.
extension PanelCore {
    /// A DOWN on a queue or buzzer group, if its policy decides it; false for an
    /// exclusive group, or a free queue group, which the ordinary rules grant. Not
    /// inlined: the press path of an exclusive group stays as small as it was.
    @inline(never)
    mutating func fairDown(
        _ b: Int, group g: Int, session: SessionID, name: String, now: Instant,
        into out: inout PanelOutput
    ) -> Bool {
        switch policies[g] {
        case .exclusive:
            return false
        case .queue(let maxQueue):
            return queueDown(b, group: g, maxQueue: maxQueue, session: session, name: name, into: &out)
        case .buzzer(let lockoutMs):
            buzzerDown(b, group: g, lockoutMs: lockoutMs, session: session, name: name, now: now, into: &out)
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
                        round: rounds[g].state, ranking: rounds[g].ranking))
            }
        }
        return result
    }
}
