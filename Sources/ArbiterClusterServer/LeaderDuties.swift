import ArbiterCluster
import ArbiterCore
import ArbiterIO
import ArbiterServer
import ArbiterWire

/// Cluster mode, the leader's side of other nodes' sessions: their commands run in the
/// core as sessions of their own node, their replies and the panel's events go back over
/// the relay, and they end when their node or its link goes.
struct LeaderDuties: ClusterPanelPart {
    let panel: ClusterPanel

    /// A command of another node's session. Runs in the core as that session (its number
    /// is in its node's range, so it cannot be one of ours), with the key it presented
    /// there checked here; its output goes into `flush`, for the caller to write once it
    /// has left the queue. `arrived` is when this node read the frame, on `clock`: the
    /// command's arrival, as for a local one. `admitted`: `NodeRuns.replacementCount` read
    /// before the frame was admitted, if it was. On `queue`.
    func relayedCommand(_ relayed: RelayCommand, arrived: Int64, from node: String, admitted: UInt64? = nil, flush: inout FlushList) {
        assertOnQueue()
        // A run of the node that was replaced since this frame was admitted: its sessions
        // ended, its session numbers may be the new run's, and nobody waits for a reply.
        if let cluster, cluster.isRetired(.init(incarnation: relayed.incarnation, lease: relayed.lease), of: node, admitted: admitted) {
            cluster.staleFrames.add(1, ordering: .relaxed)
            return
        }
        let session = SessionID(Int(clamping: relayed.session))
        var requester = RemoteRequester(
            node: node, session: session, format: .text, id: nil, term: RelayPayload.addressedTerm(relayed.command), incarnation: relayed.incarnation,
            serial: relayed.serial)
        let parsed = RelayPayload.parseCommand(relayed.command)
        switch parsed {
        case .success(let command):
            requester.format = command.format
            requester.id = command.id
            if case .join = command.request { requester.isJoin = true }
        case .failure(let error):
            requester.format = error.format
            requester.id = error.id
        }
        panel.remoteRequester = requester
        defer { panel.remoteRequester = nil }
        guard relayed.origin == node, ClusterSetup.owns(node, session: session.number) else {
            return replyRemotely(.error(.badSyntax, "session \(session) is not one of node \(node)'s; nothing was done"))
        }
        let command: ParsedCommand
        switch parsed {
        case .success(let c): command = c
        case .failure(let error): return replyRemotely(.error(error.code, error.message))
        }
        guard panel.clusterState.block != nil, leadership.mayDecideNow() else {
            return replyRemotely(
                .error(.unavailable, "this node does not decide panel \(config.id) right now (a failover is under way); \(ClusterPanel.retryHint)"))
        }
        if case .press(let press) = command.request, let refusal = leadership.fenceRefusal(resolve(press)) {
            return replyRemotely(.error(.unavailable, refusal))
        }
        panel.clusterState.relayed.remoteSessions[session] = node
        executeHere(command, receivedAt: arrived, session: session, name: relayed.sessionName, key: relayed.key, from: nil, flush: &flush)
        leadership.afterDecision()
        finishVisit()
    }

    /// The reply to the relayed session being served, back through its node's link.
    func replyRemotely(_ reply: PanelReply) {
        guard let remote = panel.remoteRequester else { return }
        sendReply(remote.isJoin ? .joinRefused : .plain, reply, to: remote, id: remote.id)
    }

    func deliverRemoteReply(_ reply: PanelReply, to remote: RemoteRequester) {
        let kind: RelayPayload.ReplyKind
        switch reply {
        case .joined(let snapshot):
            panel.clusterState.relayed.addRemoteMember(remote.session, node: remote.node, typedEvents: panel.clusterState.typedEventNodes.contains(remote.node))
            panel.clusterState.relayed.keptMembers[remote.session] = nil
            var rendered: [UInt8] = []
            MessageEncoder.encode(reply, names: names, format: remote.format, id: remote.id, into: &rendered)
            return sendReply(RelayPayload.reply(.joined, grants: core.liveGrants, seq: snapshot.seq, rendered: rendered), to: remote)
        case .left:
            panel.clusterState.relayed.removeRemoteMember(remote.session)
            kind = .left
        case .queued:
            panel.clusterState.relayed.remoteWaiters[remote.session] = remote
            kind = .queued
        case .deniedBusy, .deniedForbidden, .denied:
            counters.denials += 1
            kind = .plain
        default:
            kind = remote.isJoin ? .joinRefused : .plain
        }
        sendReply(kind, reply, to: remote, id: remote.id)
    }

    /// A queue's hand-off GRANTED for a relayed session that waited in the line.
    func deliverRemoteNotice(_ notice: PanelOutput.Notice) {
        if notice.answersEarlier {
            guard var owed = panel.clusterState.relayed.deferredReplies[notice.session], !owed.isEmpty else { return }
            let remote = owed.removeFirst()
            panel.clusterState.relayed.deferredReplies[notice.session] = owed.isEmpty ? nil : owed
            return deliverRemoteReply(notice.reply, to: remote)
        }
        guard let waiter = panel.clusterState.relayed.remoteWaiters.removeValue(forKey: notice.session) else { return }
        sendReply(.notice, notice.reply, to: waiter, id: nil)
    }

    /// Leader: relayed sessions that left a line (DEQUEUED) in the output just delivered.
    /// Their nodes are told with an empty notice, so that a later failover does not tell
    /// them of a place they no longer had.
    func tellNodesOfDequeuedWaiters(_ events: [PanelEvent]) {
        for event in events {
            guard case .dequeued(_, _, let session, _, _) = event.kind,
                let waiter = panel.clusterState.relayed.remoteWaiters.removeValue(forKey: session)
            else { continue }
            sendReply(RelayPayload.reply(.notice, rendered: []), to: waiter)
        }
    }

    func replyHistoryRemotely(_ count: Int, access: Access, format: WireFormat, id: CommandID?) {
        guard access >= .view else {
            return replyRemotely(.error(.forbidden, "HISTORY needs the view key of panel \(config.id)"))
        }
        var rendered: [UInt8] = []
        encodeHistory(history.last(count), format: format, id: id, into: &rendered)
        if let remote = panel.remoteRequester { sendReply(RelayPayload.reply(.plain, rendered: rendered), to: remote) }
    }

    func sendReply(_ line: [UInt8], to remote: RemoteRequester) {
        sendReplyFrame(to: remote) { $0.append(contentsOf: line) }
    }

    /// `reply` rendered in `remote`'s form with `id` straight into its frame, behind `kind`
    /// (the press path: `RelayFrameEncoder.encodeReply`).
    func sendReply(_ kind: RelayPayload.ReplyKind, _ reply: PanelReply, to remote: RemoteRequester, id: CommandID?) {
        sendReplyFrame(to: remote) { frame in
            frame.append(kind.rawValue)
            MessageEncoder.encode(reply, names: names, format: remote.format, id: id, into: &frame)
        }
    }

    private func sendReplyFrame(to remote: RemoteRequester, writeLine: (inout [UInt8]) -> Void) {
        guard let cluster else { return }
        // Decisions go under this node's term; a refusal while not deciding goes under the
        // term the sender addressed, which its term fencing lets through.
        let term = panel.clusterState.block?.term ?? remote.term
        // A decision's reply holds only under this node's lease; a refusal holds anyway.
        let epoch = panel.clusterState.block != nil ? cluster.outputEpoch : 0
        let frame = RelayFrameEncoder.encodeReply(
            panel: config.id, term: term, session: UInt64(remote.session.number), incarnation: remote.incarnation, serial: remote.serial,
            writeLine: writeLine)
        cluster.send(encoded: frame, toNode: remote.node, leaseEpoch: epoch)
    }

    /// Another node's `GET /api/panels` asks for this panel's state. Answered only while
    /// this node decides it, in its term; a node that does not (any more) lead stays
    /// silent, and the asking node shows its own view at its deadline. On `queue`.
    func stateQueried(id: UInt64, by node: String) {
        assertOnQueue()
        guard let cluster, leadership.mayDecideNow(), let block = panel.clusterState.block else { return }
        let state = stateJSON()
        cluster.send(.stateAnswer(panel: config.id, term: block.term, id: id, state: state), toNode: node, leaseEpoch: cluster.outputEpoch)
    }

    /// Each event once to every node relaying members of the panel, in both forms, with
    /// what a follower tracks of it as fields (`typedEvent`), or as an `event` to a node
    /// of an earlier version.
    func relayEvent(_ event: PanelEvent) {
        guard let cluster, let block = panel.clusterState.block else { return }
        var text: [UInt8] = []
        var json: [UInt8] = []
        MessageEncoder.encode(event, names: names, format: .text, into: &text)
        MessageEncoder.encode(event, names: names, format: .json, into: &json)
        let epoch = cluster.outputEpoch
        let line = RelayEventLine(fact: RelayPayload.fact(of: event), text: text, json: json)
        relay(lines: [line], term: block.term, seq: event.seq, cluster, leaseEpoch: epoch)
    }

    /// `lines` as one event frame to every node with members here, each in the form it reads.
    func relay(lines: [RelayEventLine], term: Int64, seq: UInt64, _ cluster: ClusterContext, leaseEpoch: UInt64) {
        var typed: [UInt8] = []
        var legacy: [UInt8] = []
        for (node, entry) in panel.clusterState.relayed.memberNodes {
            if entry.typedEvents {
                if typed.isEmpty { typed = RelayFrameEncoder.encode(.typedEvent(panel: config.id, term: term, seq: seq, lines: lines)) }
                cluster.send(encoded: typed, toNode: node, leaseEpoch: leaseEpoch)
            } else {
                if legacy.isEmpty {
                    let line = RelayPayload.event(text: lines.flatMap(\.text), json: lines.flatMap(\.json))
                    legacy = RelayFrameEncoder.encode(.event(panel: config.id, term: term, seq: seq, line: line))
                }
                cluster.send(encoded: legacy, toNode: node, leaseEpoch: leaseEpoch)
            }
        }
    }

    /// A relayed session's grant ended here for `reason` without its own release. Its node
    /// hears the `RELEASED` only while it has members of the panel; else it is told by a
    /// `grantEnded` frame, so that after a failover it answers the session's `UP` as this
    /// core would have (`ended=timeout`, not `ended=failover`: FailoverBooks+EndedGrants).
    func tellNodeOfGrantEnded(button: Int, reason: ReleaseReason, owner: Owner) {
        switch reason {
        case .timeout, .fired, .reset: break
        case .up, .cancel, .disconnect, .shutdown, .failover: return
        }
        guard let cluster, let block = panel.clusterState.block, let node = panel.clusterState.relayed.remoteSessions[owner.session],
            panel.clusterState.relayed.memberNodes[node] == nil, cluster.runtime?.node(node, supports: ClusterFeatures.grantEnded) == true
        else { return }
        let frame = RelayMessage.grantEnded(
            panel: config.id, term: block.term, session: UInt64(owner.session.number), button: config.buttons[button].id, fence: owner.fence,
            reason: reason)
        cluster.send(frame, toNode: node, leaseEpoch: cluster.outputEpoch)
    }

    /// A relayed session closed on its node: its grants end with `reason=disconnect`.
    func remoteSessionGone(_ session: SessionID, of node: String, run: RelayIncarnations.Run) {
        assertOnQueue()
        if let cluster, cluster.isRetired(run, of: node) { return }
        guard panel.clusterState.relayed.remoteSessions[session] == node || panel.clusterState.relayed.remoteMembers[session] == node else { return }
        endRemoteSessions([session])
    }

    /// The last link to `node` dropped while its registration stands: its sessions' grants
    /// end (`reason=disconnect`, as a dead node's) and they leave every line, but its
    /// members stay members for `ClusterSetup.memberGraceMs`, in which the node, alive,
    /// joins them again ("JOIN again": a snapshot, no JOINED). Ending them, as before,
    /// sent a LEFT and then a JOINED for each to every member of the panel on every drop:
    /// under overload (`bench/cluster.sh`'s fan-out over three nodes) each drop of a link
    /// carrying 1,000 members cost 2,000 events to 3,000 members, which kept the links
    /// silent long enough to drop again. A node that is dead loses them when its
    /// registration ends (`remoteNodeGone`).
    func remoteLinkLost(_ node: String) {
        assertOnQueue()
        let sessions = remoteSessions(of: node)
        guard !sessions.isEmpty else { return }
        endRemoteSessions(sessions, keepingMembers: true)
    }

    /// Members kept through a link drop that did not JOIN again within the grace: their
    /// node lost them meanwhile (a session that closed while the link was down, its
    /// `sessionGone` lost with it), so they leave now. On `queue` (the node timer).
    func checkKeptMembers() {
        assertOnQueue()
        guard !panel.clusterState.relayed.keptMembers.isEmpty, let cluster else { return }
        let limit = clock.now().milliseconds - cluster.setup.memberGraceMs
        let gone = panel.clusterState.relayed.keptMembers.filter { $0.value <= limit }.keys.sorted()
        guard !gone.isEmpty else { return }
        endRemoteSessions(gone)
    }

    /// A node's registration vanished, or a new run of it came: all its sessions are gone.
    func remoteNodeGone(_ node: String) {
        assertOnQueue()
        let sessions = remoteSessions(of: node)
        guard !sessions.isEmpty else { return }
        endRemoteSessions(sessions)
    }

    /// Every session of `node` this panel knows of: those that ran a command here, and its
    /// members.
    private func remoteSessions(of node: String) -> [SessionID] {
        Set(panel.clusterState.relayed.remoteSessions.filter { $0.value == node }.keys).union(
            panel.clusterState.relayed.remoteMembers.filter { $0.value == node }.keys
        )
        .sorted()
    }

    /// Ends `sessions` (`reason=disconnect` for what they hold); with `keepingMembers`,
    /// its members stay members, kept for their node to join them again (`remoteLinkLost`).
    private func endRemoteSessions(_ sessions: some Sequence<SessionID>, keepingMembers: Bool = false) {
        let list = Array(sessions)
        let now = clock.now()
        for session in list {
            panel.clusterState.relayed.remoteSessions[session] = nil
            panel.clusterState.relayed.remoteWaiters[session] = nil
            panel.clusterState.relayed.deferredReplies[session] = nil
            if keepingMembers, panel.clusterState.relayed.remoteMembers[session] != nil { panel.clusterState.relayed.keptMembers[session] = now.milliseconds }
        }
        // A member leaves the relay's list only after its LEFT went out: its node hears of
        // it even when it was that node's last member, and joins it again if it still has
        // it (`MemberJoins.rejoinDropped`) instead of leaving it to hear nothing more.
        defer { if !keepingMembers { for session in list { panel.clusterState.relayed.removeRemoteMember(session) } } }
        guard panel.clusterState.block != nil, leadership.mayDecideNow() else { return }
        var flush = FlushList()
        for session in list {
            output.removeAll()
            if keepingMembers {
                core.abandon(session: session, now: now, into: &output)
            } else {
                core.disconnect(session: session, now: now, into: &output)
            }
            deliver(replyTo: nil, format: .text, id: nil, flush: &flush)
        }
        finishBatch(&flush)
    }
}
