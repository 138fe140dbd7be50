import ArbiterCore
import ArbiterIO
import ArbiterWire

/// Cluster mode: a finger lifted from a grant that a failover ended.
///
/// PROTOCOL.md answers an `UP`/`CANCEL` by the session whose own grant already ended
/// (fired, timed out, reset) with `OK UP <p> <b> ended=<reason>`: lifting the finger then
/// is normal. A failover ends grants too, but the new leader's core never knew them, so
/// it answered `ERROR not-owner` to a kiosk that had only let go. The session's own node
/// knows which grants it was answered `GRANTED` for (`sessionGrants`) and when the term
/// that made them ended (`failoverEnded`), so it answers those releases itself.
///
/// Sound because a grant of a new term needs a `DOWN` of the session on that button after
/// the term began (a queue's line ends with its term, `endWaits`), and such a `DOWN`
/// forgets the ended grant first.
extension PanelHost {
    /// A local session's DOWN, UP or CANCEL goes to be decided (here, or relayed to the
    /// leader; not one refused with nothing done): a new DOWN supersedes whatever was known
    /// of that button, a release ends the grant it names. On `queue`.
    func notePressSent(_ press: Press<Int>, session: SessionID) {
        // Both empty on a leader's own presses (its grants live in its core): no lookup.
        guard !(clusterState.sessionGrants.isEmpty && clusterState.failoverEnded.isEmpty) else { return }
        // Looked up before they are written: a write through the nested tables costs about
        // twice a read (callgrind), and a DOWN usually finds nothing to clear.
        if press.verb == .down {
            if clusterState.sessionGrants[session]?[press.button] != nil { clusterState.sessionGrants[session]?[press.button] = nil }
            if clusterState.failoverEnded[session]?[press.button] != nil { clusterState.failoverEnded[session]?[press.button] = nil }
        } else if let known = clusterState.sessionGrants[session]?[press.button], press.fence == nil || press.fence == known.fence {
            clusterState.sessionGrants[session]?[press.button] = nil
        }
    }

    /// A relayed DOWN of `button` was answered: if `GRANTED` in `term`, the session holds the
    /// grant until it lets go or the term ends. On `queue`, for every relayed DOWN's answer.
    func noteAnswer(_ rendered: ArraySlice<UInt8>, toDownOf button: Int, session: SessionID, term: Int64) {
        guard let fence = RelayPayload.grantedFence(rendered) else { return }
        clusterState.sessionGrants[session, default: [:]][button] = (fence, term)
    }

    /// A queue's hand-off `GRANTED` (its button read from the answer). On `queue`.
    func noteHandOff(_ rendered: ArraySlice<UInt8>, session: SessionID, term: Int64) {
        guard let (id, fence) = RelayPayload.grantedButtonAndFence(rendered), let button = buttonIndex[id] else { return }
        clusterState.sessionGrants[session, default: [:]][button] = (fence, term)
    }

    /// A `RELEASED` event (members here hear the panel's events): the grant it names ended
    /// in its term, timed out, fired or reset, so a failover later does not end it. Without
    /// members here no event comes, and a grant is taken as it was answered. On `queue`.
    func sessionGrantEnded(button: Int, fence: UInt64) {
        for (session, grants) in clusterState.sessionGrants where grants[button]?.fence == fence {
            clusterState.sessionGrants[session]?[button] = nil
        }
    }

    /// Terms that certainly ended (`ended(term)`): a newer one etcd shows, or the one the
    /// old leader's step-down notice names. Each local session's relayed grant made in one
    /// of them ended with it. Not merely a leader lost from sight: a node whose own lease
    /// lapsed follows nobody for a while, and the grant may still stand (its release must
    /// then go to the leader, or a hold fires after the finger is lifted). On `queue`.
    func sessionGrantsEnded(inTerms ended: (Int64) -> Bool) {
        guard !clusterState.sessionGrants.isEmpty else { return }
        for (session, grants) in clusterState.sessionGrants {
            for (button, grant) in grants where ended(grant.term) {
                clusterState.failoverEnded[session, default: [:]][button] = grant.fence
                clusterState.sessionGrants[session]?[button] = nil
            }
            if clusterState.sessionGrants[session]?.isEmpty == true { clusterState.sessionGrants[session] = nil }
        }
    }

    /// This node stops deciding: the grants its own sessions held in its core end with the
    /// term (relayed sessions' nodes keep their own account). On `queue`.
    func localGrantsEndedWithTerm(_ grants: [(button: Int, owner: Owner)], node: String) {
        for (button, owner) in grants where ClusterSetup.owns(node, session: owner.session.number) {
            clusterState.failoverEnded[owner.session, default: [:]][button] = owner.fence
        }
    }

    /// Answers a local session's `UP`/`CANCEL` of a grant a failover ended,
    /// `OK <VERB> <p> <b> ended=failover`, and returns true; false when the command goes
    /// on as usual (no such grant, another fence named, a DOWN, or, where this node
    /// decides, the session holding the button in its core after all). On `queue`.
    func answerReleaseOfFailoverEnded(
        _ press: Press<Int>, from connection: Connection, format: WireFormat, id: CommandID?, flush: inout FlushList
    ) -> Bool {
        let session = connection.session
        let button = press.button
        guard press.verb != .down, let ended = clusterState.failoverEnded[session]?[button], press.fence == nil || press.fence == ended else {
            return false
        }
        guard access(key: connection.key) >= .press else { return false }
        clusterState.failoverEnded[session]?[button] = nil
        if clusterState.failoverEnded[session]?.isEmpty == true { clusterState.failoverEnded[session] = nil }
        if clusterState.block != nil, core.liveGrants.contains(where: { $0.button == button && $0.owner.session == session }) { return false }
        let reply = PanelReply.released(verb: press.verb == .cancel ? .cancel : .up, button: button, ended: .failover)
        // This node's own answer: after the replies still owed for commands relayed before.
        flush.appendReply(to: connection, panel: index) { [names] out, _ in
            MessageEncoder.encode(reply, names: names, format: format, id: id, into: &out)
        }
        return true
    }
}
