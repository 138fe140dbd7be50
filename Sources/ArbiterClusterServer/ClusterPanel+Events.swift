import ArbiterCluster
import ArbiterCore
import ArbiterIO
import ArbiterServer
import ArbiterWire

/// Cluster mode, a following node's side of the leader's events: checked against the
/// stream's order, tracked (the grants members knew of, members that left), and passed on
/// to the members here as the leader rendered them.
extension ClusterPanel {
    /// A `typedEvent` frame: what to track comes as fields. On `queue`.
    func passOnEvent(term eventTerm: Int64, seq: UInt64, lines: [RelayEventLine], from node: String, flush: inout FlushList) {
        var lines = lines
        if seq == 0 {
            // The old leader's failover notice: see `passOnEvent(term:seq:line:from:flush:)`.
            failoverNoticeArrived(term: eventTerm, flush: &flush)
            let known = Set(clusterState.following.knownGrants.values.map(\.fence))
            lines.removeAll { line in
                if case .released(_, let fence, _) = line.fact { !known.contains(fence) } else { false }
            }
            clusterState.following.knownGrants = [:]
        } else {
            guard inOrder(seq, from: node, flush: &flush) else { return }
            for line in lines { track(line.fact) }
        }
        // Joined once, not per member: walking `lines` in the closure copied each line
        // (its arrays and the owner's name) for every member, +130 instructions a
        // delivery (bench/relay-fanout-callgrind.py).
        let text = lines.count == 1 ? lines[0].text : lines.flatMap(\.text)
        let json = lines.count == 1 ? lines[0].json : lines.flatMap(\.json)
        for member in members.values {
            flush.append(to: member, panel: index) { out, format in out.append(contentsOf: format == .text ? text : json) }
        }
        for line in lines {
            if case .left(let number) = line.fact, case let left = SessionID(Int(clamping: number)), let connection = members[left] {
                joins.rejoinDropped(left, connection)
            }
        }
    }

    /// An `event` frame, from a leader of a version before `typedEvents`: the text form is
    /// read for what to track. On `queue`.
    func passOnEvent(term eventTerm: Int64, seq: UInt64, line: [UInt8], from node: String, flush: inout FlushList) {
        guard var (text, json) = RelayPayload.splitEvent(line) else { return }
        if seq == 0 {
            // The old leader's failover notice: its releases are the ones owed, and
            // the lines it kept are gone. It releases every grant its core held, but
            // the members here are told only of those they knew of: a grant decided
            // just before the leader paused may never have reached this node (its
            // frame dropped as made under a lease that lapsed; nemesis seed 65).
            failoverNoticeArrived(term: eventTerm, flush: &flush)
            let known = Set(clusterState.following.knownGrants.values.map(\.fence))
            text = RelayPayload.keepingFailoverReleases(of: known, in: text)
            json = RelayPayload.keepingFailoverReleases(of: known, in: json)
            clusterState.following.knownGrants = [:]
        } else {
            guard inOrder(seq, from: node, flush: &flush) else { return }
            trackLegacy(RelayPayload.ownership(ofTextEvent: text))
        }
        for member in members.values {
            flush.append(to: member, panel: index) { out, format in out.append(contentsOf: format == .text ? text : json) }
        }
        if let left = RelayPayload.leftSession(ofTextEvent: text), let connection = members[left] {
            joins.rejoinDropped(left, connection)
        }
    }

    /// The grants of the ended terms end for this node's sessions; the stream starts again
    /// with the next leader's snapshot, and queue lines are gone.
    private func failoverNoticeArrived(term: Int64, flush: inout FlushList) {
        failover.sessionGrantsEnded(inTerms: { $0 <= term })
        clusterState.following.nextEventSeq = nil
        waits.endWaits(flush: &flush)
    }

    /// Whether `seq` is the next event of the stream. Frames were lost when it is not: a
    /// link closed with them queued and the leader went on over another one. Nothing past
    /// the hole is shown; members start again from a snapshot, as after a dropped link.
    private func inOrder(_ seq: UInt64, from node: String, flush: inout FlushList) -> Bool {
        if let expected = clusterState.following.nextEventSeq, seq != expected, !members.isEmpty {
            cluster?.log.warning("relay events lost", ["panel": config.id, "node": node, "expected_seq": "\(expected)", "got_seq": "\(seq)"])
            failover.resync(from: node, because: "frames from panel \(config.id)'s leader \(node) were lost on the way before it answered", flush: &flush)
            return false
        }
        clusterState.following.nextEventSeq = seq + 1
        return true
    }

    private func track(_ fact: RelayEventLine.Fact) {
        switch fact {
        case .granted(let button, let owner, _, let fence):
            guard button < config.buttons.count else { return }
            clusterState.following.knownGrants[button] = (owner, fence)
        case .released(let button, let fence, let reason):
            guard button < config.buttons.count else { return }
            clusterState.following.knownGrants[button] = nil
            if !clusterState.grants.sessionGrants.isEmpty { failover.sessionGrantEnded(button: button, fence: fence, reason: reason) }
        case .left, .plain:
            break
        }
    }
    private func trackLegacy(_ ownership: RelayPayload.Ownership?) {
        switch ownership {
        case .granted(let button, let owner, let fence)?:
            if let b = buttonIndex[button] { clusterState.following.knownGrants[b] = (owner, fence) }
        case .released(let button, let fence, let reason)?:
            if let b = buttonIndex[button] {
                clusterState.following.knownGrants[b] = nil
                if let fence, !clusterState.grants.sessionGrants.isEmpty { failover.sessionGrantEnded(button: b, fence: fence, reason: reason) }
            }
        case nil:
            break
        }
    }
}
