import ArbiterCore
import ArbiterIO
import ArbiterWire

/// Cluster mode: a session waiting in a queue group's line when the term that kept the
/// line ends. The new leader starts with every line empty, so the waiter will never get
/// its hand-off GRANTED; each node tells its own waiters so, with
/// `DEQUEUED <p> <b> name= session= position= reason=failover` (no `seq`), whether they
/// joined or not, as the hand-off would have reached them whether they joined or not.
/// Found with `arbiter-load queue` over three nodes: after a `kill -9` of the leader its
/// contenders on the other nodes waited for ever.
extension PanelHost {
    /// Follower: the name a local session presses a fair group's button under, kept for
    /// its DEQUEUED line. Only for panels with fair groups: the tap press path pays nothing.
    func noteWaitName(_ session: SessionID, _ name: String) {
        guard core.hasFairGroups else { return }
        clusterState.waitNames[session] = name
    }

    /// Follower: the leader's QUEUED answer to a local session's DOWN.
    func noteQueued(_ session: SessionID, rendered: ArraySlice<UInt8>) {
        guard let (id, position) = RelayPayload.queuedPlace(rendered), let button = buttonIndex[id] else { return }
        let place = WaitingPlace(button: button, position: position, name: clusterState.waitNames[session] ?? "guest")
        var places = clusterState.waitingPlaces[session] ?? []
        // A DOWN again on the same button keeps its place (and is answered QUEUED again).
        places.removeAll { $0.button == button }
        places.append(place)
        clusterState.waitingPlaces[session] = places
    }

    /// Follower: the session's wait ended at the leader (its hand-off, or it left the line).
    func forgetWaits(of session: SessionID) {
        waiters[session] = nil
        clusterState.waitingPlaces[session] = nil
    }

    /// Follower: the term that kept the line ended (a new leader, the old one's step-down
    /// notice): every local waiter is told its place is gone. On `queue`.
    func endWaits(flush: inout FlushList) {
        guard !clusterState.waitingPlaces.isEmpty else { return }
        let panel = config
        for (session, places) in clusterState.waitingPlaces.sorted(by: { $0.key < $1.key }) {
            guard let connection = waiters[session] ?? sessions.withLock({ $0[session] }) else { continue }
            flush.append(to: connection) { out, format in
                for place in places {
                    MessageEncoder.encodeFailoverDequeue(
                        panel: panel, button: place.button, name: place.name, session: session, position: place.position, format: format,
                        into: &out)
                }
            }
        }
        clusterState.waitingPlaces = [:]
        waiters = [:]
    }

    /// Leader, as it stops deciding: the local sessions in its core's lines are told
    /// their places are gone (those of other nodes are told by their own nodes, which see
    /// the term end). `groups`: the ending core's, from its last snapshot. On `queue`.
    func endLocalWaits(_ groups: [GroupSnapshot], flush: inout FlushList) {
        guard core.hasFairGroups, !waiters.isEmpty else { return }
        let panel = config
        for group in groups {
            for waiting in group.waiting {
                guard let connection = waiters[waiting.session] else { continue }
                flush.append(to: connection) { out, format in
                    MessageEncoder.encodeFailoverDequeue(
                        panel: panel, button: waiting.button, name: waiting.name, session: waiting.session, position: waiting.position,
                        format: format, into: &out)
                }
            }
        }
        waiters = [:]
    }

    /// Leader: relayed sessions that left a line (DEQUEUED) in the output just delivered.
    /// Their nodes are told with an empty notice, so that a later failover does not tell
    /// them of a place they no longer had.
    func tellNodesOfDequeuedWaiters(_ events: [PanelEvent]) {
        for event in events {
            guard case .dequeued(_, _, let session, _, _) = event.kind,
                let waiter = clusterState.remoteWaiters.removeValue(forKey: session)
            else { continue }
            sendReply(RelayPayload.reply(.notice, rendered: []), to: waiter)
        }
    }
}
