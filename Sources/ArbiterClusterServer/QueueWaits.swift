import ArbiterServer
import ArbiterCluster
import ArbiterCore
import ArbiterIO
import ArbiterWire
import Dispatch

/// Cluster mode: a session waiting in a queue group's line when the term that kept the
/// line ends. The new leader starts with every line empty, so the waiter will never get
/// its hand-off GRANTED; each node tells its own waiters so, with
/// `DEQUEUED <p> <b> name= session= position= reason=failover` (no `seq`), whether they
/// joined or not, as the hand-off would have reached them whether they joined or not.
/// Found with `arbiter-load queue` over three nodes: after a `kill -9` of the leader its
/// contenders on the other nodes waited for ever.
///
/// In the same term (this node resynchronised: its link to the leader dropped, frames were
/// lost, its lease lapsed) the line lives on, but the leader may have taken this node's
/// waiters out of it (`reason=disconnect`, when its own link to this node dropped), or
/// handed one the group with a GRANTED that was lost on the way. Nobody would tell them:
/// `bench/nemesis.py --workload queue` left contenders waiting for ever after node
/// cut-offs. So each waiter's DOWN is sent again (`rewait`): a DOWN of a session still
/// waiting keeps its place, one taken out of the line joins it again at its end (or gets
/// the group if it is free), and one that holds the group is answered its grant again.
/// The waiter hears only of a grant (as a hand-off's GRANTED) or of its place lost.
struct QueueWaits: ClusterPanelPart {
    let panel: ClusterPanel

    /// Follower: a DOWN keeps the name and key a local session presses a fair group's
    /// button under, for its DEQUEUED line and its DOWN sent again. Only for panels with
    /// fair groups: the tap press path pays nothing. An UP or CANCEL leaves the line (or releases the grant) in the session's mind at
    /// once: its DOWN is never sent again, even if the release is lost on the way (a
    /// `GRANTED` after a lifted finger would hold the group for a session that let go).
    func notePress(_ verb: Verb, button: Int, _ connection: Connection) {
        guard core.hasFairGroups else { return }
        if verb == .down {
            panel.clusterState.following.waitNames[connection.session] = (connection.name, connection.key)
        } else if var places = panel.clusterState.following.waitingPlaces[connection.session] {
            places.removeAll { $0.button == button }
            panel.clusterState.following.waitingPlaces[connection.session] = places.isEmpty ? nil : places
        }
    }

    /// Follower: the leader's QUEUED answer to a local session's DOWN (in `format`).
    func noteQueued(_ session: SessionID, rendered: ArraySlice<UInt8>, format: WireFormat) {
        guard let (id, position) = RelayPayload.queuedPlace(rendered), let button = buttonIndex[id] else { return }
        let identity = panel.clusterState.following.waitNames[session]
        let place = WaitingPlace(button: button, position: position, name: identity?.name ?? "guest", key: identity?.key, format: format)
        var places = panel.clusterState.following.waitingPlaces[session] ?? []
        // A DOWN again on the same button keeps its place (and is answered QUEUED again).
        places.removeAll { $0.button == button }
        places.append(place)
        panel.clusterState.following.waitingPlaces[session] = places
    }

    /// Follower: the session's wait ended at the leader (its hand-off, or it left the line).
    func forgetWaits(of session: SessionID) {
        waiters[session] = nil
        panel.clusterState.following.waitingPlaces[session] = nil
    }

    /// Follower: the term that kept the line ended (a new leader, the old one's step-down
    /// notice): every local waiter is told its place is gone. On `queue`.
    func endWaits(flush: inout FlushList) {
        guard !panel.clusterState.following.waitingPlaces.isEmpty else { return }
        for (session, places) in panel.clusterState.following.waitingPlaces.sorted(by: { $0.key < $1.key }) {
            for place in places { tellPlaceLost(session, place, flush: &flush) }
        }
        panel.clusterState.following.waitingPlaces = [:]
        waiters = [:]
    }

    private func tellPlaceLost(_ session: SessionID, _ place: WaitingPlace, flush: inout FlushList) {
        guard let connection = waiters[session] ?? sessions.withLock({ $0[session] }) else { return }
        writePlaceLost(button: place.button, name: place.name, session: session, position: place.position, to: connection, flush: &flush)
    }

    /// `DEQUEUED ... reason=failover` to one connection, in its form.
    private func writePlaceLost(button: Int, name: String, session: SessionID, position: Int, to connection: Connection, flush: inout FlushList) {
        let panel = config
        flush.append(to: connection, panel: index) { out, format in
            MessageEncoder.encodeFailoverDequeue(
                panel: panel, button: button, name: name, session: session, position: position, format: format, into: &out)
        }
    }

    /// Follower, after a resynchronisation in the same term: each local waiter's DOWN goes
    /// to the leader again (see above). Not while this node's lease is unsafe: a lapse
    /// sends them once it is safe again (`FailoverBooks.rejoinAfterLapse`). On `queue`.
    func rewait(at node: String, address: String?) {
        guard !panel.clusterState.following.waitingPlaces.isEmpty else { return }
        for (session, places) in panel.clusterState.following.waitingPlaces.sorted(by: { $0.key < $1.key }) {
            for place in places { sendWait(session, place, to: node, address: address) }
        }
    }

    private func sendWait(_ session: SessionID, _ place: WaitingPlace, to node: String, address: String?) {
        guard let cluster, !cluster.mayNotRelay() else { return }
        let down = RelayPayload.command(
            .press(.down(panel: config.id, button: config.buttons[place.button].id)), format: place.format, id: nil, term: panel.clusterState.leader.term ?? 0)
        let (frame, serial) = follower.commandFrame(cluster, session: session, name: place.name, key: place.key, command: down)
        guard cluster.send(frame, toNode: node, address: address, leaseEpoch: cluster.outputEpoch) else { return }
        if var places = panel.clusterState.following.waitingPlaces[session], let i = places.firstIndex(where: { $0.button == place.button }) {
            places[i].resent = serial
            panel.clusterState.following.waitingPlaces[session] = places
        }
        let entry = InFlight(format: place.format, id: nil, kind: .rewait(button: place.button), serial: serial, sentAtMs: clock.now().milliseconds)
        panel.clusterState.following.inFlight[session, default: []].append(entry)
        cluster.relayedOut.add(1, ordering: .relaxed)
    }

    /// The leader could not take the DOWN now (`ERROR unavailable`: its next block of
    /// fences is being reserved, it is not deciding yet): the session may well still be in
    /// its line, so it is not told its place is lost; the DOWN goes again shortly, while
    /// the leader stays the same. A new leader or a resync settles it otherwise.
    private func retryWait(_ session: SessionID, button: Int) {
        let leader = panel.clusterState.leader.node
        let term = panel.clusterState.leader.term
        queue.asyncAfter(deadline: DispatchTime.now() + DispatchTimeInterval.milliseconds(150)) { [weak panel] in
            guard let panel, let leader, panel.clusterState.leader.node == leader, panel.clusterState.leader.term == term, leader != panel.cluster?.node,
                let place = panel.clusterState.following.waitingPlaces[session]?.first(where: { $0.button == button })
            else { return }
            panel.waits.sendWait(session, place, to: leader, address: panel.clusterState.leader.address)
        }
    }

    /// Follower: the answer to a waiter's DOWN sent again. QUEUED: it waits, in the place
    /// named; GRANTED: it holds the group, and is told as a hand-off is; anything else
    /// (ERROR unavailable, a DENIED): its place is lost, and it is told so. Nothing when
    /// it stopped waiting meanwhile (its hand-off came, or it left the line). On `queue`.
    func settleRewait(
        _ session: SessionID, button: Int, serial: UInt64, reply: RelayPayload.Reply, term: Int64, on connection: Connection,
        flush: inout FlushList
    ) {
        // A late answer: the session's hand-off came meanwhile, and it may wait again
        // since, in a place this answer knows nothing of (nemesis seed 62: a GRANTED of the
        // earlier wait, forwarded for the new one, reached a session already past it).
        guard var places = panel.clusterState.following.waitingPlaces[session], let i = places.firstIndex(where: { $0.button == button && $0.resent == serial })
        else { return }
        if reply.kind == .queued {
            if let (_, position) = RelayPayload.queuedPlace(reply.rendered) { places[i].position = position }
            panel.clusterState.following.waitingPlaces[session] = places
            return
        }
        if RelayPayload.isUnavailable(reply.rendered) { return retryWait(session, button: button) }
        let place = places.remove(at: i)
        if RelayPayload.isGranted(reply.rendered) {
            // The session's grant, as a hand-off's is: a failover ends it (`ended=failover`).
            failover.noteAnswer(reply.rendered, toDownOf: button, session: session, term: term)
            let bytes = reply.rendered
            flush.append(to: connection, panel: index) { out, _ in out.append(contentsOf: bytes) }
        } else {
            tellPlaceLost(session, place, flush: &flush)
        }
        panel.clusterState.following.waitingPlaces[session] = places.isEmpty ? nil : places
        if places.isEmpty { waiters[session] = nil }
    }

    /// Leader, as it stops deciding: the local sessions in its core's lines are told
    /// their places are gone (those of other nodes are told by their own nodes, which see
    /// the term end). `groups`: the ending core's, from its last snapshot. On `queue`.
    func endLocalWaits(_ groups: [GroupSnapshot], flush: inout FlushList) {
        guard core.hasFairGroups, !waiters.isEmpty else { return }
        for group in groups {
            for waiting in group.waiting {
                guard let connection = waiters[waiting.session] else { continue }
                writePlaceLost(
                    button: waiting.button, name: waiting.name, session: waiting.session, position: waiting.position, to: connection, flush: &flush)
            }
        }
        waiters = [:]
    }

    /// Follower: whether a hand-off's GRANTED is for a place this node knows the session
    /// waits in. One that is not (the session was told its place was lost, and a DOWN sent
    /// again before a leader change was queued by the new leader, or its QUEUED answer was
    /// lost and it was told its DOWN may or may not have been done) would reach a session
    /// that expects nothing, and the group would stay its own with nobody to let it go
    /// (nemesis seed 62, queue: "c6 after DOWN: GRANTED busy q1 fence=24004"). Such a grant
    /// is not passed on but let go at once, with a CANCEL of its fence. On `queue`.
    /// `leader`: the node that sent it. A grant that cannot be let go is passed on after all.
    func handOffExpected(_ session: SessionID, _ rendered: ArraySlice<UInt8>, from leader: String) -> Bool {
        guard let (id, fence) = RelayPayload.grantedButtonAndFence(rendered), let button = buttonIndex[id] else { return true }
        if panel.clusterState.following.waitingPlaces[session]?.contains(where: { $0.button == button }) == true { return true }
        guard let cluster, leader != cluster.node else { return true }
        let identity = panel.clusterState.following.waitNames[session]
        let cancel = RelayPayload.command(
            .press(.cancel(panel: config.id, button: id, fence: fence)), format: .text, id: nil, term: panel.clusterState.leader.term ?? 0)
        let (frame, serial) = follower.commandFrame(cluster, session: session, name: identity?.name ?? "guest", key: identity?.key, command: cancel)
        let address = panel.clusterState.leader.node == leader ? panel.clusterState.leader.address : nil
        guard cluster.send(frame, toNode: leader, address: address, leaseEpoch: cluster.outputEpoch) else { return true }
        let entry = InFlight(format: .text, id: nil, kind: .cleanup, serial: serial, sentAtMs: clock.now().milliseconds)
        panel.clusterState.following.inFlight[session, default: []].append(entry)
        cluster.log.info("a hand-off nobody waited for was let go", ["panel": config.id, "session": "\(session)", "button": id, "fence": "\(fence)"])
        return false
    }
}
