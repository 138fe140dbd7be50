import ArbiterServer
import ArbiterCluster
import ArbiterCore
import ArbiterIO
import ArbiterWire
import Dispatch

/// Cluster mode, follower side: local members' JOINs at a leader on another node. A JOIN
/// while no leader is known waits for one (parked); a member is joined again after a
/// leader change, a lapse or a dropped link, and its re-join's answer is its fresh
/// snapshot; a JOIN that waits too long is answered `ERROR unavailable`.
struct MemberJoins: ClusterPanelPart {
    let panel: ClusterPanel

    /// A JOIN while no leader is known waits for one (a failover takes about the lease
    /// TTL), so a kiosk that reconnects during a failover is not refused; after
    /// `ClusterSetup.joinWaitMs` (10 s) it is answered `ERROR unavailable` (`expireJoins`).
    func park(join connection: Connection, format: WireFormat, id: CommandID?, flush: inout FlushList) {
        panel.clusterState.following.pendingJoins[connection.session] = connection
        parkJoin(
            ParkedJoin(format: format, id: id, since: clock.now().milliseconds, slot: connection.reserveReplySlot()), for: connection.session,
            flush: &flush)
    }

    /// A local session's connection: joining, a member, or one that used the panel.
    func joiningConnection(_ session: SessionID) -> Connection? {
        panel.clusterState.following.pendingJoins[session] ?? members[session] ?? sessions.withLock { $0[session] }
    }

    /// Parks a session's own JOIN to wait for a leader. One waits per session: when the
    /// session sent JOIN again meanwhile, the earlier of the two (by reply slot) is
    /// answered now in its place, and the later one waits. Overwritten instead, the
    /// earlier one's slot was never answered, and every later reply of the session waited
    /// behind it. On `queue`.
    func parkJoin(_ join: ParkedJoin, for session: SessionID, flush: inout FlushList) {
        guard let other = self.panel.clusterState.following.parkedJoins[session], let otherSlot = other.slot, let slot = join.slot, otherSlot != slot
        else {
            self.panel.clusterState.following.parkedJoins[session] = join
            return
        }
        let (earlier, later) = otherSlot < slot ? (other, join) : (join, other)
        self.panel.clusterState.following.parkedJoins[session] = later
        guard let connection = joiningConnection(session) else { return }
        let panel = config.id
        flush.answer(earlier.slot, to: connection, panel: index) { out, _ in
            MessageEncoder.encode(
                .error(
                    .unavailable,
                    "JOIN \(panel) was sent again while this one waited for a leader: the last one is answered, nothing was done for this one"),
                format: earlier.format, id: earlier.id, into: &out)
        }
    }

    /// Answers `ERROR unavailable` every session's own JOIN that has waited
    /// `ClusterSetup.joinWaitMs` since the session sent it, parked or sent again and again:
    /// no leader was known (etcd without a majority), or the one known could not be reached
    /// from this node (nodes cut off from each other, a leader's wrong `--advertise`). Its
    /// answer, if one still comes, finds nobody waiting and is dropped. On `queue`.
    func expireJoins() {
        guard let cluster else { return }
        let limit = cluster.setup.joinWaitMs
        let now = clock.now().milliseconds
        var due: Set<SessionID> = []
        for (session, parked) in panel.clusterState.following.parkedJoins where now - parked.since >= limit { due.insert(session) }
        for (session, entries) in panel.clusterState.following.inFlight
        where entries.contains(where: { if case .join(_, let since, _) = $0.kind { now - since >= limit } else { false } }) {
            due.insert(session)
        }
        // Every JOIN of such a session, parked or sent, is answered (it may have sent JOIN
        // more than once): each has a reply slot, and one left unanswered would hold the
        // session's later replies.
        var expired: [SessionID: [(format: WireFormat, id: CommandID?, slot: UInt64?)]] = [:]
        for session in due {
            if let parked = panel.clusterState.following.parkedJoins[session] { expired[session, default: []].append((parked.format, parked.id, parked.slot)) }
            for entry in panel.clusterState.following.inFlight[session] ?? [] where entry.isJoin {
                expired[session, default: []].append((entry.format, entry.id, entry.slot))
            }
        }
        guard !expired.isEmpty else { return }
        let seconds = limit / 1000
        // A node whose own lease lapsed knows why it could not reach the leader: naming the
        // leader alone sent the operator looking at the wrong machine (etcd without a
        // majority, by hand: "leader n1 could not be reached" while n1 was fine).
        let message =
            cluster.isLapsed
            ? "panel \(config.id) could not be joined for \(seconds) s: this node cannot reach etcd right now (its lease lapsed: etcd has no majority, or this node is cut off from it); nothing was done, JOIN again later"
            : panel.clusterState.leader.node.map { "panel \(config.id)'s leader \($0) could not be reached from this node for \(seconds) s; JOIN again later" }
                ?? "panel \(config.id) has had no leader for \(seconds) s (etcd without a majority?); nothing was done, JOIN again later"
        var flush = FlushList()
        for (session, joins) in expired.sorted(by: { $0.key < $1.key }) {
            panel.clusterState.following.parkedJoins[session] = nil
            panel.clusterState.following.inFlight[session]?.removeAll { $0.isJoin }
            guard let connection = panel.clusterState.following.pendingJoins.removeValue(forKey: session) else { continue }
            if members[session] == nil { panel.clusterState.following.memberIdentity[session] = nil }
            for waiting in joins.sorted(by: { ($0.slot ?? 0) < ($1.slot ?? 0) }) {
                flush.answer(waiting.slot, to: connection, panel: index) { out, _ in
                    MessageEncoder.encode(.error(.unavailable, message), format: waiting.format, id: waiting.id, into: &out)
                }
            }
        }
        finishBatch(&flush)
    }

    /// Joins a member again after its rejoin was refused (the leader was not deciding yet),
    /// while the leader stays the same; after about 10 s it is told to JOIN itself.
    func retryRejoin(_ session: SessionID, attempt: Int) {
        let leader = panel.clusterState.leader.node
        let term = panel.clusterState.leader.term
        queue.asyncAfter(deadline: DispatchTime.now() + DispatchTimeInterval.milliseconds(100)) { [weak panel] in
            panel?.joins.rejoinAgain(session, attempt: attempt, leader: leader, term: term)
        }
    }

    /// A session's own JOIN answered `ERROR unavailable` by the node it was sent to (that
    /// node does not decide the panel yet) waits again, and is sent again every 200 ms to
    /// whichever node leads by then, until `expireJoins` answers it after
    /// `ClusterSetup.joinWaitMs` from when the session sent it.
    func retryJoin(_ session: SessionID, _ join: ParkedJoin, attempt: Int, flush: inout FlushList) {
        parkJoin(join, for: session, flush: &flush)
        finishVisit()
        queue.asyncAfter(deadline: DispatchTime.now() + DispatchTimeInterval.milliseconds(200)) { [weak panel] in
            panel?.joins.joinAgain(session, attempt: attempt)
        }
    }

    /// `retryJoin`'s next attempt, if the session's JOIN still waits and another node
    /// leads. On `queue`.
    private func joinAgain(_ session: SessionID, attempt: Int) {
        guard let connection = panel.clusterState.following.pendingJoins[session], panel.clusterState.following.parkedJoins[session] != nil,
            let leader = panel.followedLeader
        else { return }
        sendRejoin(session, connection, to: leader, address: panel.clusterState.leader.address, attempt: attempt + 1)
    }

    /// `retryRejoin`'s next attempt, if the session still waits and `leader` still leads in
    /// `term`. On `queue`.
    private func rejoinAgain(_ session: SessionID, attempt: Int, leader: String?, term: Int64?) {
        guard let connection = panel.clusterState.following.pendingJoins[session], panel.clusterState.leader.node == leader,
            panel.clusterState.leader.term == term,
            let leader
        else { return }
        guard attempt < 100 else {
            var flush = FlushList()
            failover.releaseOwed(to: session, on: connection, flush: &flush)
            self.panel.clusterState.following.pendingJoins[session] = nil
            let panel = config.id
            flush.append(to: connection, panel: index) { out, format in
                MessageEncoder.encode(
                    .error(.unavailable, "panel \(panel)'s leader did not take this session back as a member; JOIN \(panel) again"),
                    format: format, into: &out)
            }
            return finishBatch(&flush)
        }
        sendRejoin(session, connection, to: leader, address: panel.clusterState.leader.address, attempt: attempt + 1)
    }

    /// Relays a JOIN for every local member (and every JOIN still unanswered) to the
    /// leader's node. Members wait for their new snapshot (the JOIN reply) before any
    /// event reaches them again.
    func rejoin(at node: String, address: String?) {
        guard cluster != nil else { return }
        holdMembersForRejoin()
        for (session, connection) in panel.clusterState.following.pendingJoins.sorted(by: { $0.key < $1.key }) {
            sendRejoin(session, connection, to: node, address: address, attempt: 0)
        }
    }

    private func sendRejoin(_ session: SessionID, _ connection: Connection, to node: String, address: String?, attempt: Int) {
        guard let cluster, let identity = panel.clusterState.following.memberIdentity[session] else { return }
        // A node whose lease lapsed joins its members again only under its new lease, once
        // it is safe (`FailoverBooks.rejoinAfterLapse`); they wait in `pendingJoins` meanwhile. A leader
        // paused past its lease learns on waking that another node leads: joined at once,
        // under the lease that expired, the new leader took them for the old run's, and
        // ended them at the first frame of the new run (every member read the JOINED, a
        // LEFT, and the JOINED again).
        if cluster.mayNotRelay() { return }
        // A session's own JOIN that waited is answered in its form, with its id.
        let parked = panel.clusterState.following.parkedJoins.removeValue(forKey: session)
        let format = parked?.format ?? connection.withLock { connection.eventFormat }
        let (frame, serial) = follower.commandFrame(
            cluster, session: session, name: identity.name, key: identity.key,
            command: RelayPayload.command(.join(panel: config.id), format: format, id: parked?.id, term: panel.clusterState.leader.term ?? 0))
        if cluster.send(frame, toNode: node, address: address) {
            let kind: InFlight.Kind = parked.map { .join(slot: $0.slot, since: $0.since, attempt: attempt) } ?? .rejoin(attempt: attempt)
            panel.clusterState.following.inFlight[session, default: []].append(
                InFlight(format: format, id: parked?.id, kind: kind, serial: serial, sentAtMs: clock.now().milliseconds))
            cluster.relayedOut.add(1, ordering: .relaxed)
        } else if let parked {
            // Not sent (no way to the leader yet): the JOIN waits on, and is still answered
            // in its place in the session's replies, by the next leader or its deadline.
            panel.clusterState.following.parkedJoins[session] = parked
        }
    }

    /// The leader ended the membership of a session this node still has as a member,
    /// without this node asking (its own LEAVE and its close take it out of `members`
    /// first): the leader kept it through a link drop and its re-join crossed the drop,
    /// then gave it up. Left so, it would hear nothing more; it joins again instead, and
    /// reads its new snapshot as after any re-join. On `queue`.
    func rejoinDropped(_ session: SessionID, _ connection: Connection) {
        guard let leader = panel.followedLeader else { return }
        if members.removeValue(forKey: session) != nil { host.memberCount.subtract(1, ordering: .relaxed) }
        panel.clusterState.following.pendingJoins[session] = connection
        sendRejoin(session, connection, to: leader, address: panel.clusterState.leader.address, attempt: 0)
    }

    /// Every member waits for its re-join's snapshot: nothing the leader sends reaches it
    /// before that.
    func holdMembersForRejoin() {
        for (session, connection) in members { panel.clusterState.following.pendingJoins[session] = connection }
        members = [:]
        host.memberCount.store(0, ordering: .relaxed)
    }
}
