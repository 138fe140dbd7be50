extension PanelCore {
    func groupOf(_ button: Int) -> Int { groupIndex[button] }

    func grantOf(group g: Int) -> Grant? { grants[g] }

    func endedGrant(button b: Int, session: SessionID) -> EndedGrant? {
        ended[b].isEmpty ? nil : ended[b][session]
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
        // The lines are emptied first: a reset or shutdown hands nothing on.
        if hasFairGroups { clearFairGroups(reason: reason == .reset ? .reset : .shutdown, into: &out) }
        for g in 0..<groupCount where grants[g] != nil {
            end(group: g, reason: reason, now: now, into: &out)
        }
    }
}
