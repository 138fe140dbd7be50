import ArbiterServer
import ArbiterCore
import ArbiterIO
import ArbiterWire

/// Cluster mode: a finger lifted from a grant that a failover ended, or that the old
/// leader had ended itself (timed out, fired, reset) before the failover.
///
/// PROTOCOL.md answers an `UP`/`CANCEL` by the session whose own grant already ended
/// (fired, timed out, reset) with `OK UP <p> <b> ended=<reason>`: lifting the finger then
/// is normal. A failover ends grants too, but the new leader's core never knew them, so
/// it answered `ERROR not-owner` to a kiosk that had only let go. The session's own node
/// knows which grants it was answered `GRANTED` for (`sessionGrants`), which of them the
/// leader ended and why (`leaderEnded`: their `RELEASED` event, or the leader's
/// `grantEnded` frame where no member hears events), and when the term that made them
/// ended (`failoverEnded`), so it answers those releases itself, with the old leader's
/// reason where it had one.
///
/// Sound because a grant of a new term needs a `DOWN` of the session on that button after
/// the term began (a queue's line ends with its term, `QueueWaits.endWaits`), and such a `DOWN`
/// forgets the ended grant first.
extension FailoverBooks {
    /// A local session's DOWN, UP or CANCEL goes to be decided (here, or relayed to the
    /// leader; not one refused with nothing done): a new DOWN supersedes whatever was known
    /// of that button, a release ends the grant it names. On `queue`.
    func notePressSent(_ press: Press<Int>, session: SessionID) {
        // All empty on a leader's own presses (its grants live in its core): no lookup.
        guard
            !(panel.clusterState.grants.sessionGrants.isEmpty && panel.clusterState.grants.failoverEnded.isEmpty
                && panel.clusterState.grants.leaderEnded.isEmpty)
        else {
            return
        }
        // Looked up before they are written: a write through the nested tables costs about
        // twice a read (callgrind), and a DOWN usually finds nothing to clear.
        if press.verb == .down {
            if panel.clusterState.grants.sessionGrants[session]?[press.button] != nil { panel.clusterState.grants.sessionGrants[session]?[press.button] = nil }
            if panel.clusterState.grants.failoverEnded[session]?[press.button] != nil { panel.clusterState.grants.failoverEnded[session]?[press.button] = nil }
            if panel.clusterState.grants.leaderEnded[session]?[press.button] != nil { panel.clusterState.grants.leaderEnded[session]?[press.button] = nil }
            return
        }
        if let known = panel.clusterState.grants.sessionGrants[session]?[press.button], press.fence == nil || press.fence == known.fence {
            panel.clusterState.grants.sessionGrants[session]?[press.button] = nil
        }
        // The leader answers this release `ended=<reason>`: once, as after a failover.
        if let ended = panel.clusterState.grants.leaderEnded[session]?[press.button], press.fence == nil || press.fence == ended.fence {
            panel.clusterState.grants.leaderEnded[session]?[press.button] = nil
        }
    }

    /// A relayed DOWN of `button` was answered: if `GRANTED` in `term`, the session holds the
    /// grant until it lets go or the term ends. On `queue`, for every relayed DOWN's answer.
    func noteAnswer(_ rendered: ArraySlice<UInt8>, toDownOf button: Int, session: SessionID, term: Int64) {
        guard let fence = RelayPayload.grantedFence(rendered) else { return }
        panel.clusterState.grants.sessionGrants[session, default: [:]][button] = (fence, term)
    }

    /// A queue's hand-off `GRANTED` (its button read from the answer). On `queue`.
    func noteHandOff(_ rendered: ArraySlice<UInt8>, session: SessionID, term: Int64) {
        guard let (id, fence) = RelayPayload.grantedButtonAndFence(rendered), let button = buttonIndex[id] else { return }
        panel.clusterState.grants.sessionGrants[session, default: [:]][button] = (fence, term)
    }

    /// A `RELEASED` event (members here hear the panel's events): the grant it names ended
    /// in its term, so a failover later does not end it; if the leader ended it (timed out,
    /// fired, reset), the session's `UP` after a failover is answered with that reason. On
    /// `queue`.
    func sessionGrantEnded(button: Int, fence: UInt64, reason: ReleaseReason?) {
        for (session, grants) in panel.clusterState.grants.sessionGrants where grants[button]?.fence == fence {
            sessionGrantEnded(session, button: button, fence: fence, reason: reason)
        }
    }

    /// The same for one session: the leader's `grantEnded` frame, which a node with no
    /// member of the panel gets instead of the event. On `queue`.
    func sessionGrantEnded(_ session: SessionID, button: Int, fence: UInt64, reason: ReleaseReason?) {
        guard let grant = panel.clusterState.grants.sessionGrants[session]?[button], grant.fence == fence else { return }
        panel.clusterState.grants.sessionGrants[session]?[button] = nil
        if panel.clusterState.grants.sessionGrants[session]?.isEmpty == true { panel.clusterState.grants.sessionGrants[session] = nil }
        // The reasons a leader's core answers a late `UP` with (`ended=`); a disconnect's
        // session is gone, or was given up with its node's link, and the core forgot it.
        guard let reason else { return }
        switch reason {
        case .timeout, .fired, .reset:
            panel.clusterState.grants.leaderEnded[session, default: [:]][button] = (fence, grant.term, reason)
        case .up, .cancel, .disconnect, .shutdown, .failover:
            break
        }
    }

    /// Terms that certainly ended (`ended(term)`): a newer one etcd shows, or the one the
    /// old leader's step-down notice names. Each local session's relayed grant made in one
    /// of them ended with it, and one the leader ended earlier is answered for here from
    /// now on. Not merely a leader lost from sight: a node whose own lease lapsed follows
    /// nobody for a while, and the grant may still stand (its release must then go to the
    /// leader, or a hold fires after the finger is lifted). On `queue`.
    func sessionGrantsEnded(inTerms ended: (Int64) -> Bool) {
        for (session, grants) in panel.clusterState.grants.leaderEnded {
            for (button, grant) in grants where ended(grant.term) {
                panel.clusterState.grants.failoverEnded[session, default: [:]][button] = (grant.fence, grant.reason)
                panel.clusterState.grants.leaderEnded[session]?[button] = nil
            }
            if panel.clusterState.grants.leaderEnded[session]?.isEmpty == true { panel.clusterState.grants.leaderEnded[session] = nil }
        }
        // After the ended ones: a grant that stood is the session's last of its button.
        for (session, grants) in panel.clusterState.grants.sessionGrants {
            for (button, grant) in grants where ended(grant.term) {
                panel.clusterState.grants.failoverEnded[session, default: [:]][button] = (grant.fence, .failover)
                panel.clusterState.grants.sessionGrants[session]?[button] = nil
            }
            if panel.clusterState.grants.sessionGrants[session]?.isEmpty == true { panel.clusterState.grants.sessionGrants[session] = nil }
        }
    }

    /// This node stops deciding: the grants its own sessions held in its core end with the
    /// term, and the ones its core had ended (timed out, fired, reset) are answered here
    /// from now on, as the core would have (relayed sessions' nodes keep their own
    /// account). On `queue`, before the core is replaced.
    func localGrantsEndedWithTerm(_ grants: [(button: Int, owner: Owner)], node: String) {
        for ended in core.endedGrants where ClusterSetup.owns(node, session: ended.session.number) {
            switch ended.reason {
            case .timeout, .fired, .reset:
                panel.clusterState.grants.failoverEnded[ended.session, default: [:]][ended.button] = (ended.fence, ended.reason)
            case .up, .cancel, .disconnect, .shutdown, .failover:
                break
            }
        }
        for (button, owner) in grants where ClusterSetup.owns(node, session: owner.session.number) {
            panel.clusterState.grants.failoverEnded[owner.session, default: [:]][button] = (owner.fence, .failover)
        }
    }

    /// Answers a local session's `UP`/`CANCEL` of a grant whose term a failover ended,
    /// `OK <VERB> <p> <b> ended=<reason>` (`failover`, or how it ended before), and
    /// returns true; false when the command goes on as usual (no such grant, another fence
    /// named, a DOWN, or, where this node decides, the session holding the button in its
    /// core after all). On `queue`.
    func answerReleaseOfFailoverEnded(
        _ press: Press<Int>, from connection: Connection, format: WireFormat, id: CommandID?, flush: inout FlushList
    ) -> Bool {
        let session = connection.session
        let button = press.button
        guard press.verb != .down, let ended = panel.clusterState.grants.failoverEnded[session]?[button], press.fence == nil || press.fence == ended.fence
        else {
            return false
        }
        guard access(key: connection.key) >= .press else { return false }
        panel.clusterState.grants.failoverEnded[session]?[button] = nil
        if panel.clusterState.grants.failoverEnded[session]?.isEmpty == true { panel.clusterState.grants.failoverEnded[session] = nil }
        if panel.clusterState.block != nil, core.liveGrants.contains(where: { $0.button == button && $0.owner.session == session }) { return false }
        let reply = PanelReply.released(verb: press.verb == .cancel ? .cancel : .up, button: button, ended: ended.reason)
        // This node's own answer: after the replies still owed for commands relayed before.
        flush.appendReply(to: connection, panel: index) { [names] out, _ in
            MessageEncoder.encode(reply, names: names, format: format, id: id, into: &out)
        }
        return true
    }
}
