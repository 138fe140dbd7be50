import ArbiterCluster
import ArbiterCore
import ArbiterIO
import ArbiterServer
import ArbiterWire

/// Cluster mode, what a following node hears back from the leader's node: each relayed
/// command's one reply, taken in order (`InFlight`) and written in its session's reply
/// slot, and the leader's events and answers routed to where they belong.
extension FollowerRelay {
    /// A reply, event or term notice from the leader's node; delivered only if its term is
    /// the one etcd shows (`RelayInbox`). Its output goes into `flush`, for the caller to
    /// write once it has left the queue. On `queue`.
    func relayedFromLeader(_ message: RelayMessage, from node: String, flush: inout FlushList) {
        assertOnQueue()
        guard panel.clusterState.following.inbox.receive(message) == .deliver else {
            cluster?.staleFrames.add(1, ordering: .relaxed)
            return
        }
        switch message {
        case .reply(_, let replyTerm, let number, let line, let incarnation, let serial):
            // For a session of an earlier run of this node, which had the same number.
            guard incarnation == cluster?.setup.incarnation else {
                cluster?.staleFrames.add(1, ordering: .relaxed)
                return
            }
            let session = SessionID(Int(clamping: number))
            guard let reply = RelayPayload.parseReply(line) else { return }
            let connection = panel.clusterState.following.pendingJoins[session] ?? members[session] ?? waiters[session] ?? sessions.withLock { $0[session] }
            guard let connection else { return }
            var answered: InFlight?
            if reply.kind != .notice {
                switch claim(serial, of: session, on: connection, flush: &flush) {
                case .claimed(let entry): answered = entry
                case .nobodyWaits: break
                case .alreadyAnswered:
                    // Its command was answered `ERROR unavailable` when its link or leader
                    // went (or its reply is a duplicate): one answer per command.
                    cluster?.staleFrames.add(1, ordering: .relaxed)
                    return
                }
            }
            switch answered?.kind {
            case .cleanup?:
                return finishVisit()
            case .rewait(let button)?:
                // A waiter's DOWN this node sent again: nobody asked, so only what changes
                // for the waiter reaches it.
                waits.settleRewait(session, button: button, serial: answered?.serial ?? 0, reply: reply, term: replyTerm, on: connection, flush: &flush)
                return finishVisit()
            case .rejoin(let attempt)? where reply.kind == .joinRefused:
                // A new leader answers before its first fence block is reserved: the member
                // waits (nobody asked it anything) and is joined again shortly.
                return joins.retryRejoin(session, attempt: attempt)
            case .join(let slot, let since, let attempt)? where reply.kind == .joinRefused && RelayPayload.isUnavailable(reply.rendered):
                // The node asked does not decide the panel: a leader restarted at once,
                // before its election's word, or the whole cluster starting. The JOIN
                // waits, as while no leader is known, and asks again shortly.
                let parked = ParkedJoin(format: answered?.format ?? .text, id: answered?.id, since: since, slot: slot)
                return joins.retryJoin(session, parked, attempt: attempt, flush: &flush)
            case .rejoin?, .command?, .down?, .join?, nil:
                break
            }
            switch reply.kind {
            case .joined:
                failover.settleOwed(session, on: connection, by: reply.grants, flush: &flush)
                // A node without members gets no events: its first member's snapshot
                // starts the stream again, at the event after it. Nil (any next event
                // accepted) let an older event that came late, on another link the leader
                // had written to, reach a member after a newer snapshot (`bench/cluster.sh`
                // fan-out over three nodes: seq going back).
                if members.isEmpty { panel.clusterState.following.nextEventSeq = reply.seq.map { $0 + 1 } }
                panel.clusterState.following.pendingJoins[session] = nil
                if members.updateValue(connection, forKey: session) == nil { host.memberCount.add(1, ordering: .relaxed) }
                panel.clusterState.following.knownGrants = reply.grants
            case .left:
                if members.removeValue(forKey: session) != nil { host.memberCount.subtract(1, ordering: .relaxed) }
                panel.clusterState.following.memberIdentity[session] = nil
                panel.clusterState.following.owedReleases[session] = nil
            case .joinRefused:
                failover.releaseOwed(to: session, on: connection, flush: &flush)
                panel.clusterState.following.pendingJoins[session] = nil
                panel.clusterState.following.memberIdentity[session] = nil
            case .queued:
                waiters[session] = connection
                waits.noteQueued(session, rendered: reply.rendered, format: answered?.format ?? .text)
            case .notice:
                // A hand-off's GRANTED, or (empty) word that the session left the line.
                if reply.rendered.isEmpty {
                    waits.forgetWaits(of: session)
                    return finishVisit()
                }
                guard waits.handOffExpected(session, reply.rendered, from: node) else { return finishVisit() }
                waits.forgetWaits(of: session)
                failover.noteHandOff(reply.rendered, session: session, term: replyTerm)
            case .plain:
                if case .down(_, let button)? = answered?.kind { failover.noteAnswer(reply.rendered, toDownOf: button, session: session, term: replyTerm) }
            }
            let bytes = reply.rendered
            flush.answer(answered?.slot, to: connection, panel: index) { out, _ in out.append(contentsOf: bytes) }
        case .event(_, let eventTerm, let seq, let line):
            panel.passOnEvent(term: eventTerm, seq: seq, line: line, from: node, flush: &flush)
        case .typedEvent(_, let eventTerm, let seq, let lines):
            panel.passOnEvent(term: eventTerm, seq: seq, lines: lines, from: node, flush: &flush)
        case .stateAnswer(_, _, let id, let state):
            cluster?.stateAnswered(id, panel: config.id, state: state, from: node)
        case .grantEnded(_, _, let number, let button, let fence, let reason):
            if let b = buttonIndex[button] { failover.sessionGrantEnded(SessionID(Int(clamping: number)), button: b, fence: fence, reason: reason) }
        case .command, .sessionGone, .ping, .stateQuery, .kick, .kickAnswer:
            break
        }
        finishVisit()
    }

    private enum Claim {
        case claimed(InFlight)
        /// Nothing waits for a reply of this session (a leader's answer to nothing).
        case nobodyWaits
        case alreadyAnswered
    }

    /// Takes the in-flight entry a reply answers: the one with its serial. Entries sent
    /// before it lost their replies (a leader answers one session in order): each gets
    /// `ERROR unavailable`, and a lost JOIN of this node's own is sent again. A reply
    /// without a serial answers the oldest entry. On `queue`.
    private func claim(_ serial: UInt64, of session: SessionID, on connection: Connection, flush: inout FlushList) -> Claim {
        // Edited in place, through the table's index: taken out and put back, the array was
        // freed at every reply and made again for the session's next command. A session's
        // emptied list stays (its close removes it).
        guard let slot = panel.clusterState.following.inFlight.index(forKey: session), !panel.clusterState.following.inFlight.values[slot].isEmpty else {
            return serial == 0 ? .nobodyWaits : .alreadyAnswered
        }
        guard serial != 0 else { return .claimed(panel.clusterState.following.inFlight.values[slot].removeFirst()) }
        guard let position = panel.clusterState.following.inFlight.values[slot].firstIndex(where: { $0.serial == serial }) else { return .alreadyAnswered }
        let entry = panel.clusterState.following.inFlight.values[slot][position]
        guard position > 0 else {
            // The usual case, with no slice of the list alive: one alive would make the
            // removal copy it.
            panel.clusterState.following.inFlight.values[slot].removeFirst()
            return .claimed(entry)
        }
        let lost = Array(panel.clusterState.following.inFlight.values[slot][..<position])
        panel.clusterState.following.inFlight.values[slot].removeFirst(position + 1)
        let message = "its answer from panel \(config.id)'s leader was lost on the way; it may or may not have been done; try again in a second or two"
        for earlier in lost {
            switch earlier.kind {
            case .rewait, .cleanup:
                // A waiter's DOWN sent again: its place stays as known; the next resync sends it again.
                continue
            case .rejoin(let attempt):
                joins.retryRejoin(session, attempt: attempt)
                continue
            case .command, .down, .join:
                break
            }
            if earlier.isJoin, panel.clusterState.following.pendingJoins[session] != nil {
                // The session's own JOIN is sent again and answered in its place.
                joins.parkJoin(earlier.parked(now: clock.now().milliseconds), for: session, flush: &flush)
                joins.retryRejoin(session, attempt: earlier.attempt)
                continue
            }
            flush.answer(earlier.slot, to: connection, panel: index) { out, _ in
                MessageEncoder.encode(.error(.unavailable, message), format: earlier.format, id: earlier.id, into: &out)
            }
        }
        return .claimed(entry)
    }
}
