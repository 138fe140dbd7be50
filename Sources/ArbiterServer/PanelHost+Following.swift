import ArbiterCluster
import ArbiterCore
import ArbiterIO
import ArbiterWire
import Dispatch

/// Cluster mode, the routing of a local session's command and the side of a node that
/// does not decide the panel: commands go to the leader's node, its replies and events
/// come back through `RelayInbox` (term fencing) and are written to the local sessions.
extension PanelHost {
    /// A local session's command in cluster mode: decided here if this node leads the
    /// panel, else relayed to the leader, else `ERROR unavailable`. On `queue`.
    func executeInCluster(_ command: ParsedCommand, receivedAt: Int64, from connection: Connection, flush: inout FlushList) {
        if case .join = command.request { clusterState.memberIdentity[connection.session] = (connection.name, connection.key) }
        var press: Press<Int>?
        if case .press(let p) = command.request, let button = buttonIndex[p.button] { press = p.resolved(panel: index, button: button) }
        if let press, !clusterState.failoverEnded.isEmpty,
            answerReleaseOfFailoverEnded(press, from: connection, format: command.format, id: command.id, flush: &flush)
        {
            return
        }
        if clusterState.block != nil, mayDecideNow() {
            if case .press(let p) = command.request, let refusal = fenceRefusal(resolve(p)) {
                return refuse(refusal, to: connection, format: command.format, id: command.id, flush: &flush)
            }
            if let press { notePressSent(press, session: connection.session) }
            executeHere(
                command, receivedAt: receivedAt, session: connection.session, name: connection.name, key: connection.key, from: connection, flush: &flush)
            return afterDecision()
        }
        relay(command.request, press: press, format: command.format, id: command.id, from: connection, flush: &flush)
    }

    func executePressInCluster(_ press: Press<Int>, receivedAt: Int64, format: WireFormat, from connection: Connection, flush: inout FlushList) {
        if !clusterState.failoverEnded.isEmpty, answerReleaseOfFailoverEnded(press, from: connection, format: format, id: nil, flush: &flush) {
            return
        }
        if clusterState.block != nil, mayDecideNow() {
            if let refusal = fenceRefusal(.press(press)) { return refuse(refusal, to: connection, format: format, id: nil, flush: &flush) }
            notePressSent(press, session: connection.session)
            counters.commands += 1
            run(
                .press(press), access: access(key: connection.key), now: Instant(nanoseconds: receivedAt), replyFormat: format, id: nil,
                session: connection.session, name: connection.name, from: connection, flush: &flush)
            return afterDecision()
        }
        guard
            let (cluster, leader, unanswered) = relayRoute(
                isJoin: false, isRelease: press.verb != .down, format: format, id: nil, from: connection, flush: &flush)
        else { return }
        notePress(press.verb, button: press.button, connection)
        let serial = nextSerial()
        let frame = RelayFrameEncoder.encodePress(
            origin: cluster.node, session: UInt64(connection.session.number), sessionName: connection.name, key: connection.key, panel: config.id,
            json: format == .json, term: clusterState.leaderTerm ?? 0, verb: press.verb.rawValue, button: config.buttons[press.button].id,
            fence: press.fence, arrivedAt: clock.now().milliseconds, incarnation: cluster.setup.incarnation, serial: serial,
            lease: cluster.synchronisedLease)
        send(
            frame, serial: serial, isJoin: false, unanswered: unanswered, to: leader, cluster, format: format, id: nil, from: connection,
            press: press, flush: &flush)
    }

    /// To the leader's node, or `ERROR unavailable` while no other node is known to lead.
    /// `press`: the request's press with its button looked up, if it is one.
    private func relay(
        _ request: Request, press: Press<Int>?, format: WireFormat, id: CommandID?, from connection: Connection,
        flush: inout FlushList
    ) {
        let isJoin: Bool
        if case .join = request { isJoin = true } else { isJoin = false }
        let isRelease: Bool
        if case .press(let press) = request { isRelease = press.verb != .down } else { isRelease = false }
        guard let (cluster, leader, unanswered) = relayRoute(isJoin: isJoin, isRelease: isRelease, format: format, id: id, from: connection, flush: &flush)
        else { return }
        if let press { notePress(press.verb, button: press.button, connection) }
        let (message, serial) = commandFrame(
            cluster, session: connection.session, name: connection.name, key: connection.key,
            command: RelayPayload.command(request, format: format, id: id, term: clusterState.leaderTerm ?? 0))
        send(
            RelayFrameEncoder.encode(message), serial: serial, isJoin: isJoin, unanswered: unanswered, to: leader, cluster, format: format, id: id,
            from: connection, press: press, flush: &flush)
    }

    /// The leader a local session's command goes to, or nil when it cannot go (it is
    /// answered here: `ERROR unavailable`, or a JOIN waits for a leader). `unanswered`:
    /// a release passed on while this node's lease is unsafe, whose answer is not awaited.
    ///
    /// A release (`UP`, `CANCEL`) goes even while this node's lease has lapsed: releasing
    /// can never make a second owner, and etcd may still keep this node (a lapse is this
    /// node's own safe deadline, before the lease's end), so the grant stands at the
    /// leader. Refused, a lifted finger would leave a hold to fire and a talk to run to its
    /// timeout. The leader drops it if it has ended this node's run meanwhile. Its answer
    /// would be dropped here while the lease is unsafe, so the session is told at once
    /// that it may or may not have been done (`send`).
    private func relayRoute(isJoin: Bool, isRelease: Bool = false, format: WireFormat, id: CommandID?, from connection: Connection, flush: inout FlushList)
        -> (ClusterContext, String, unanswered: Bool)?
    {
        // Asked once, and only after a leader elsewhere is known: asking may notice a lapse
        // (`heardWhileLapsed`). The one answer decides both whether a release goes and
        // that it goes unanswered; asked twice, a lapse between the two could send a DOWN
        // unanswered.
        guard let cluster, let leader = clusterState.leaderNode, leader != cluster.node, clusterState.leaderTerm != nil,
            case let unsafe = cluster.mayNotRelay(), isRelease || !unsafe
        else {
            if isJoin {
                park(join: connection, format: format, id: id, flush: &flush)
                return nil
            }
            if let cluster, cluster.isLapsed {
                refuse(
                    "this node cannot reach etcd right now (its lease lapsed), so it cannot reach panel \(config.id)'s leader safely; \(PanelHost.retryHint)",
                    to: connection, format: format, id: id, flush: &flush)
                return nil
            }
            refuse(
                "panel \(config.id) has no leader right now (a failover is under way, or etcd has no majority); \(PanelHost.retryHint)",
                to: connection, format: format, id: id, flush: &flush)
            return nil
        }
        guard cluster.canRelay else {
            refuse(
                "panel \(config.id)'s leader \(leader) cannot be reached from this node yet; \(PanelHost.retryHint)",
                to: connection, format: format, id: id, flush: &flush)
            return nil
        }
        // The election key names the leader; its address comes with its registration,
        // which this node reads up to a second later when the leader is a node that has
        // just started. Sent before, the frame would be dropped at the dial and the press
        // answered "may or may not have been done" when nothing was. A JOIN is sent: a
        // lost one waits and is sent again (`failInFlight`).
        if clusterState.leaderAddress == nil { clusterState.leaderAddress = cluster.address(ofNode: leader) }
        if clusterState.leaderAddress == nil, !isJoin, !cluster.hasLinkUp(to: leader) {
            refuse(
                "panel \(config.id)'s leader \(leader) is not known to this node yet (its address is read from etcd within a second); \(PanelHost.retryHint)",
                to: connection, format: format, id: id, flush: &flush)
            return nil
        }
        return (cluster, leader, isRelease && unsafe)
    }

    /// Sends a local session's encoded command to the leader and notes that its reply is
    /// owed (an in-flight entry, a reply slot).
    private func send(
        _ frame: [UInt8], serial: UInt64, isJoin: Bool, unanswered: Bool, to leader: String, _ cluster: ClusterContext, format: WireFormat,
        id: CommandID?, from connection: Connection, press: Press<Int>? = nil, flush: inout FlushList
    ) {
        // Only a press that leaves counts: one refused with nothing done changes nothing.
        if let press { notePressSent(press, session: connection.session) }
        if unanswered {
            // A release while this node's lease is unsafe (`relayRoute`): its answer would
            // be dropped, so none is awaited; the session is answered now.
            post(frame, to: leader, cluster, leaseEpoch: 0)
            return refuse(
                "this node cannot reach etcd right now (its lease lapsed); the release was passed on to panel \(config.id)'s leader \(leader) all the same, and it may or may not have been done; send it again in a second or two",
                to: connection, format: format, id: id, flush: &flush)
        }
        // Before the frame can leave: its reply may come back at once.
        var entry = InFlight(format: format, id: id, slot: connection.reserveReplySlot(), serial: serial, sentAtMs: clock.now().milliseconds)
        if let press, press.verb == .down { entry.downButton = press.button }
        // Under this node's lease: written after it lapsed (a pause on the way), the leader
        // could run it for a session it has ended since.
        post(frame, to: leader, cluster, leaseEpoch: cluster.outputEpoch)
        if isJoin {
            entry.isJoin = true
            entry.joinSinceMs = entry.sentAtMs
            clusterState.pendingJoins[connection.session] = connection
        }
        clusterState.inFlight[connection.session, default: []].append(entry)
    }

    /// Hands a command's frame to the relay: after the panel's queue is left when a visit
    /// defers its sends (`SessionRunner.visit`), else now.
    private func post(_ frame: [UInt8], to leader: String, _ cluster: ClusterContext, leaseEpoch: UInt64) {
        if clusterState.deferredSends != nil {
            clusterState.deferredSends?.append((frame, leader, clusterState.leaderAddress, leaseEpoch))
        } else {
            _ = cluster.send(encoded: frame, toNode: leader, address: clusterState.leaderAddress, leaseEpoch: leaseEpoch)
        }
        cluster.relayedOut.add(1, ordering: .relaxed)
    }

    /// A JOIN while no leader is known waits for one (a failover takes about the lease
    /// TTL), so a kiosk that reconnects during a failover is not refused; after
    /// `ClusterSetup.joinWaitMs` (10 s) it is answered `ERROR unavailable` (`expireJoins`).
    private func park(join connection: Connection, format: WireFormat, id: CommandID?, flush: inout FlushList) {
        clusterState.pendingJoins[connection.session] = connection
        parkJoin(
            ParkedJoin(format: format, id: id, since: clock.now().milliseconds, slot: connection.reserveReplySlot()), for: connection.session,
            flush: &flush)
    }

    /// A local session's connection: joining, a member, or one that used the panel.
    private func joiningConnection(_ session: SessionID) -> Connection? {
        clusterState.pendingJoins[session] ?? members[session] ?? sessions.withLock { $0[session] }
    }

    /// Parks a session's own JOIN to wait for a leader. One waits per session: when the
    /// session sent JOIN again meanwhile, the earlier of the two (by reply slot) is
    /// answered now in its place, and the later one waits. Overwritten instead, the
    /// earlier one's slot was never answered, and every later reply of the session waited
    /// behind it. On `queue`.
    func parkJoin(_ join: ParkedJoin, for session: SessionID, flush: inout FlushList) {
        guard let other = clusterState.parkedJoins[session], let otherSlot = other.slot, let slot = join.slot, otherSlot != slot else {
            clusterState.parkedJoins[session] = join
            return
        }
        let (earlier, later) = otherSlot < slot ? (other, join) : (join, other)
        clusterState.parkedJoins[session] = later
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
        for (session, parked) in clusterState.parkedJoins where now - parked.since >= limit { due.insert(session) }
        for (session, entries) in clusterState.inFlight
        where entries.contains(where: { $0.isJoin && $0.joinSinceMs > 0 && now - $0.joinSinceMs >= limit }) {
            due.insert(session)
        }
        // Every JOIN of such a session, parked or sent, is answered (it may have sent JOIN
        // more than once): each has a reply slot, and one left unanswered would hold the
        // session's later replies.
        var expired: [SessionID: [(format: WireFormat, id: CommandID?, slot: UInt64?)]] = [:]
        for session in due {
            if let parked = clusterState.parkedJoins[session] { expired[session, default: []].append((parked.format, parked.id, parked.slot)) }
            for entry in clusterState.inFlight[session] ?? [] where entry.isJoin && entry.joinSinceMs > 0 {
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
            : clusterState.leaderNode.map { "panel \(config.id)'s leader \($0) could not be reached from this node for \(seconds) s; JOIN again later" }
                ?? "panel \(config.id) has had no leader for \(seconds) s (etcd without a majority?); nothing was done, JOIN again later"
        var flush = FlushList()
        for (session, joins) in expired.sorted(by: { $0.key < $1.key }) {
            clusterState.parkedJoins[session] = nil
            clusterState.inFlight[session]?.removeAll { $0.isJoin && $0.joinSinceMs > 0 }
            guard let connection = clusterState.pendingJoins.removeValue(forKey: session) else { continue }
            if members[session] == nil { clusterState.memberIdentity[session] = nil }
            for waiting in joins.sorted(by: { ($0.slot ?? 0) < ($1.slot ?? 0) }) {
                flush.answer(waiting.slot, to: connection, panel: index) { out, _ in
                    MessageEncoder.encode(.error(.unavailable, message), format: waiting.format, id: waiting.id, into: &out)
                }
            }
        }
        finishBatch(&flush)
    }

    /// A local session closed (cluster mode): its grants end here if this node decides,
    /// else the leader's node is told.
    func disconnectInCluster(_ connection: Connection, flush: inout FlushList) {
        if members.removeValue(forKey: connection.session) != nil { memberCount.subtract(1, ordering: .relaxed) }
        waiters.removeValue(forKey: connection.session)
        clusterState.waitingPlaces.removeValue(forKey: connection.session)
        clusterState.waitNames.removeValue(forKey: connection.session)
        clusterState.pendingJoins.removeValue(forKey: connection.session)
        clusterState.memberIdentity.removeValue(forKey: connection.session)
        clusterState.inFlight.removeValue(forKey: connection.session)
        clusterState.parkedJoins.removeValue(forKey: connection.session)
        clusterState.owedReleases.removeValue(forKey: connection.session)
        clusterState.sessionGrants.removeValue(forKey: connection.session)
        clusterState.failoverEnded.removeValue(forKey: connection.session)
        clusterState.leaderEnded.removeValue(forKey: connection.session)
        guard let cluster else { return }
        if clusterState.block != nil {
            guard mayDecideNow() else { return }
            output.removeAll()
            core.disconnect(session: connection.session, now: clock.now(), into: &output)
            deliver(replyTo: nil, format: .text, id: nil, flush: &flush)
            return
        }
        if let leader = clusterState.leaderNode, leader != cluster.node {
            cluster.send(
                .sessionGone(
                    origin: cluster.node, session: UInt64(connection.session.number), incarnation: cluster.setup.incarnation,
                    lease: cluster.synchronisedLease), toNode: leader,
                address: clusterState.leaderAddress)
        }
    }

    /// etcd shows a new holder of the panel's election key (nil: vacant). Members here are
    /// owed `RELEASED ... reason=failover` for the old term's grants they knew of; with a
    /// new leader on another node they join it again, and its JOIN replies are their fresh
    /// snapshots. On `queue` (the runtime's callback).
    func leaderChanged(node: String?, address: String?, term: Int64?) {
        assertOnQueue()
        guard let cluster else { return }
        if node == cluster.node {
            // This node's own key: `becameLeader`, once its fences are reserved, starts it.
            clusterState.leaderNode = node
            clusterState.leaderAddress = cluster.setup.advertise
            clusterState.leaderTerm = term
            return
        }
        // etcd shows another holder while this node still decides (the runtime's step-down
        // may come after this news): stop first, so members here get their failover
        // releases before they are joined to the new leader.
        if let block = clusterState.block { stopDeciding(term: block.term, reason: .deposed) }
        let termChanged = term != clusterState.leaderTerm || node != clusterState.leaderNode
        clusterState.leaderNode = node
        clusterState.leaderAddress = address
        clusterState.leaderTerm = term
        guard termChanged else { return }
        var flush = FlushList()
        failInFlight(because: "panel \(config.id)'s leader changed before it answered", flush: &flush)
        owedFailover(newTerm: term, flush: &flush)
        endWaits(flush: &flush)
        if let node, term != nil { rejoin(at: node, address: address) }
        finishBatch(&flush)
    }

    /// Joins a member again after its rejoin was refused (the leader was not deciding yet),
    /// while the leader stays the same; after about 10 s it is told to JOIN itself.
    private func retryRejoin(_ session: SessionID, attempt: Int) {
        let leader = clusterState.leaderNode
        let term = clusterState.leaderTerm
        queue.asyncAfter(deadline: DispatchTime.now() + DispatchTimeInterval.milliseconds(100)) { [weak self] in
            guard let self, let connection = clusterState.pendingJoins[session], clusterState.leaderNode == leader, clusterState.leaderTerm == term,
                let leader
            else { return }
            guard attempt < 100 else {
                var flush = FlushList()
                releaseOwed(to: session, on: connection, flush: &flush)
                clusterState.pendingJoins[session] = nil
                let panel = config.id
                flush.append(to: connection, panel: index) { out, format in
                    MessageEncoder.encode(
                        .error(.unavailable, "panel \(panel)'s leader did not take this session back as a member; JOIN \(panel) again"),
                        format: format, into: &out)
                }
                return finishBatch(&flush)
            }
            sendRejoin(session, connection, to: leader, address: clusterState.leaderAddress, attempt: attempt + 1)
        }
    }

    /// Relays a JOIN for every local member (and every JOIN still unanswered) to the
    /// leader's node. Members wait for their new snapshot (the JOIN reply) before any
    /// event reaches them again.
    func rejoin(at node: String, address: String?) {
        guard cluster != nil else { return }
        holdMembersForRejoin()
        for (session, connection) in clusterState.pendingJoins.sorted(by: { $0.key < $1.key }) {
            sendRejoin(session, connection, to: node, address: address, attempt: 0)
        }
    }

    private func sendRejoin(_ session: SessionID, _ connection: Connection, to node: String, address: String?, attempt: Int) {
        guard let cluster, let identity = clusterState.memberIdentity[session] else { return }
        // A node whose lease lapsed joins its members again only under its new lease, once
        // it is safe (`rejoinAfterLapse`); they wait in `pendingJoins` meanwhile. A leader
        // paused past its lease learns on waking that another node leads: joined at once,
        // under the lease that expired, the new leader took them for the old run's, and
        // ended them at the first frame of the new run (every member read the JOINED, a
        // LEFT, and the JOINED again).
        if cluster.mayNotRelay() { return }
        // A session's own JOIN that waited is answered in its form, with its id.
        let parked = clusterState.parkedJoins.removeValue(forKey: session)
        let format = parked?.format ?? connection.withLock { connection.eventFormat }
        let (frame, serial) = commandFrame(
            cluster, session: session, name: identity.name, key: identity.key,
            command: RelayPayload.command(.join(panel: config.id), format: format, id: parked?.id, term: clusterState.leaderTerm ?? 0))
        if cluster.send(frame, toNode: node, address: address) {
            var entry = InFlight(
                format: format, id: parked?.id, rejoin: parked == nil, attempt: attempt, slot: parked?.slot, serial: serial,
                sentAtMs: clock.now().milliseconds)
            entry.isJoin = parked != nil
            entry.joinSinceMs = parked?.since ?? 0
            clusterState.inFlight[session, default: []].append(entry)
            cluster.relayedOut.add(1, ordering: .relaxed)
        } else if let parked {
            // Not sent (no way to the leader yet): the JOIN waits on, and is still answered
            // in its place in the session's replies, by the next leader or its deadline.
            clusterState.parkedJoins[session] = parked
        }
    }

    /// A local session's command for the leader, with the next serial, which its reply
    /// will name (`claim`).
    func commandFrame(_ cluster: ClusterContext, session: SessionID, name: String, key: String?, command: [UInt8]) -> (RelayMessage, UInt64) {
        let serial = nextSerial()
        let frame = RelayMessage.command(
            RelayCommand(
                origin: cluster.node, session: UInt64(session.number), sessionName: name, key: key, panel: config.id, command: command,
                arrivedAt: clock.now().milliseconds, incarnation: cluster.setup.incarnation, serial: serial,
                lease: cluster.synchronisedLease))
        return (frame, serial)
    }

    private func nextSerial() -> UInt64 {
        clusterState.lastSerial += 1
        return clusterState.lastSerial
    }

    /// Ends, for the local members, the grants of the term that just ended that they were
    /// told of, unless the old leader's own failover notice already did.
    func owedFailover(newTerm: Int64?, flush: inout FlushList) {
        // Only a term etcd shows: a node that lost sight of its leader (its own lease lapsed)
        // follows nobody for a while, and the grants may stand.
        if let newTerm { sessionGrantsEnded(inTerms: { $0 < newTerm }) }
        let grants = restartStream(term: newTerm, flush: &flush)
        guard !grants.isEmpty else { return }
        for member in members.values { writeFailoverReleases(grants, to: member, flush: &flush) }
        counters.releases[ReleaseReason.failover.index] += grants.count
    }

    /// A reply, event or term notice from the leader's node; delivered only if its term is
    /// the one etcd shows (`RelayInbox`). Its output goes into `flush`, for the caller to
    /// write once it has left the queue. On `queue`.
    func relayedFromLeader(_ message: RelayMessage, from node: String, flush: inout FlushList) {
        assertOnQueue()
        guard clusterState.inbox.receive(message) == .deliver else {
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
            let connection = clusterState.pendingJoins[session] ?? members[session] ?? waiters[session] ?? sessions.withLock { $0[session] }
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
            if answered?.cleanup == true { return finishVisit() }
            if let entry = answered, entry.rewait >= 0 {
                // A waiter's DOWN this node sent again: nobody asked, so only what changes
                // for the waiter reaches it.
                settleRewait(session, button: entry.rewait, serial: entry.serial, reply: reply, term: replyTerm, on: connection, flush: &flush)
                return finishVisit()
            }
            if reply.kind == .joinRefused, answered?.rejoin == true {
                // A new leader answers before its first fence block is reserved: the member
                // waits (nobody asked it anything) and is joined again shortly.
                return retryRejoin(session, attempt: answered?.attempt ?? 0)
            }
            switch reply.kind {
            case .joined:
                settleOwed(session, on: connection, by: reply.grants, flush: &flush)
                // A node without members gets no events: its first member's snapshot
                // starts the stream again, at the event after it. Nil (any next event
                // accepted) let an older event that came late, on another link the leader
                // had written to, reach a member after a newer snapshot (`bench/cluster.sh`
                // fan-out over three nodes: seq going back).
                if members.isEmpty { clusterState.nextEventSeq = reply.seq.map { $0 + 1 } }
                clusterState.pendingJoins[session] = nil
                if members.updateValue(connection, forKey: session) == nil { memberCount.add(1, ordering: .relaxed) }
                clusterState.knownGrants = reply.grants
            case .left:
                if members.removeValue(forKey: session) != nil { memberCount.subtract(1, ordering: .relaxed) }
                clusterState.memberIdentity[session] = nil
                clusterState.owedReleases[session] = nil
            case .joinRefused:
                releaseOwed(to: session, on: connection, flush: &flush)
                clusterState.pendingJoins[session] = nil
                clusterState.memberIdentity[session] = nil
            case .queued:
                waiters[session] = connection
                noteQueued(session, rendered: reply.rendered, format: answered?.format ?? .text)
            case .notice:
                // A hand-off's GRANTED, or (empty) word that the session left the line.
                if reply.rendered.isEmpty {
                    forgetWaits(of: session)
                    return finishVisit()
                }
                guard handOffExpected(session, reply.rendered, from: node) else { return finishVisit() }
                forgetWaits(of: session)
                noteHandOff(reply.rendered, session: session, term: replyTerm)
            case .plain:
                if let entry = answered, entry.downButton >= 0 { noteAnswer(reply.rendered, toDownOf: entry.downButton, session: session, term: replyTerm) }
            }
            let bytes = reply.rendered
            flush.answer(answered?.slot, to: connection, panel: index) { out, _ in out.append(contentsOf: bytes) }
        case .event(_, let eventTerm, let seq, let line):
            guard var (text, json) = RelayPayload.splitEvent(line) else { return }
            if seq == 0 {
                // The old leader's failover notice: its releases are the ones owed, and
                // the lines it kept are gone. It releases every grant its core held, but
                // the members here are told only of those they knew of: a grant decided
                // just before the leader paused may never have reached this node (its
                // frame dropped as made under a lease that lapsed; nemesis seed 65).
                sessionGrantsEnded(inTerms: { $0 <= eventTerm })
                let known = Set(clusterState.knownGrants.values.map(\.fence))
                text = RelayPayload.keepingFailoverReleases(of: known, in: text)
                json = RelayPayload.keepingFailoverReleases(of: known, in: json)
                clusterState.knownGrants = [:]
                clusterState.nextEventSeq = nil
                endWaits(flush: &flush)
            } else {
                if let expected = clusterState.nextEventSeq, seq != expected, !members.isEmpty {
                    // Frames were lost: a link closed with them queued and the leader went on
                    // over another one. Nothing past the hole is shown; members start again
                    // from a snapshot, as after a dropped link.
                    cluster?.log.warning(
                        "relay events lost", ["panel": config.id, "node": node, "expected_seq": "\(expected)", "got_seq": "\(seq)"])
                    resync(from: node, because: "frames from panel \(config.id)'s leader \(node) were lost on the way before it answered", flush: &flush)
                    break
                }
                clusterState.nextEventSeq = seq + 1
                track(RelayPayload.ownership(ofTextEvent: text))
            }
            for member in members.values {
                flush.append(to: member, panel: index) { out, format in out.append(contentsOf: format == .text ? text : json) }
            }
            if let left = RelayPayload.leftSession(ofTextEvent: text), let connection = members[left] {
                rejoinDropped(left, connection)
            }
        case .stateAnswer(_, _, let id, let state):
            cluster?.stateAnswered(id, panel: config.id, state: state, from: node)
        case .grantEnded(_, _, let number, let button, let fence, let reason):
            if let b = buttonIndex[button] { sessionGrantEnded(SessionID(Int(clamping: number)), button: b, fence: fence, reason: reason) }
        case .command, .sessionGone, .ping, .stateQuery, .kick, .kickAnswer:
            break
        }
        finishVisit()
    }

    /// The leader ended the membership of a session this node still has as a member,
    /// without this node asking (its own LEAVE and its close take it out of `members`
    /// first): the leader kept it through a link drop and its re-join crossed the drop,
    /// then gave it up. Left so, it would hear nothing more; it joins again instead, and
    /// reads its new snapshot as after any re-join. On `queue`.
    private func rejoinDropped(_ session: SessionID, _ connection: Connection) {
        guard let leader = followedLeader else { return }
        if members.removeValue(forKey: session) != nil { memberCount.subtract(1, ordering: .relaxed) }
        clusterState.pendingJoins[session] = connection
        sendRejoin(session, connection, to: leader, address: clusterState.leaderAddress, attempt: 0)
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
        guard let slot = clusterState.inFlight.index(forKey: session), !clusterState.inFlight.values[slot].isEmpty else {
            return serial == 0 ? .nobodyWaits : .alreadyAnswered
        }
        guard serial != 0 else { return .claimed(clusterState.inFlight.values[slot].removeFirst()) }
        guard let position = clusterState.inFlight.values[slot].firstIndex(where: { $0.serial == serial }) else { return .alreadyAnswered }
        let entry = clusterState.inFlight.values[slot][position]
        guard position > 0 else {
            // The usual case, with no slice of the list alive: one alive would make the
            // removal copy it.
            clusterState.inFlight.values[slot].removeFirst()
            return .claimed(entry)
        }
        let lost = Array(clusterState.inFlight.values[slot][..<position])
        clusterState.inFlight.values[slot].removeFirst(position + 1)
        let message = "its answer from panel \(config.id)'s leader was lost on the way; it may or may not have been done; try again in a second or two"
        for earlier in lost {
            // A waiter's DOWN sent again: its place stays as known; the next resync sends it again.
            if earlier.rewait >= 0 || earlier.cleanup { continue }
            if earlier.rejoin {
                retryRejoin(session, attempt: earlier.attempt)
                continue
            }
            if earlier.isJoin, clusterState.pendingJoins[session] != nil {
                // The session's own JOIN is sent again and answered in its place.
                parkJoin(earlier.parked(now: clock.now().milliseconds), for: session, flush: &flush)
                retryRejoin(session, attempt: earlier.attempt)
                continue
            }
            flush.answer(earlier.slot, to: connection, panel: index) { out, _ in
                MessageEncoder.encode(.error(.unavailable, message), format: earlier.format, id: earlier.id, into: &out)
            }
        }
        return .claimed(entry)
    }

    /// Answers every relayed command still unanswered with `ERROR unavailable`: its
    /// answer can no longer come (a grant it may have got ended with the failover).
    /// `termEnded`: the leader changed, so a grant the command got has ended; otherwise
    /// (a dropped link, lost frames, a lapsed lease) it may still stand, as the snapshot
    /// that follows shows.
    func failInFlight(because why: String, termEnded: Bool = true, flush: inout FlushList) {
        guard !clusterState.inFlight.isEmpty else { return }
        let grant = termEnded ? " (a grant it got ended with the failover)" : " (a grant it got may still be held: the panel's snapshot shows it)"
        let message = "\(why); it may or may not have been done\(grant); try again in a second or two"
        let now = clock.now().milliseconds
        for (session, pending) in clusterState.inFlight.sorted(by: { $0.key < $1.key }) {
            // A session's own JOIN waits for the next leader instead (it stays pending).
            for entry in pending where entry.isJoin && clusterState.pendingJoins[session] != nil {
                parkJoin(entry.parked(now: now), for: session, flush: &flush)
            }
            let waiting = pending.filter { !$0.rejoin && $0.rewait < 0 && !$0.cleanup && !($0.isJoin && clusterState.pendingJoins[session] != nil) }
            guard !waiting.isEmpty, let connection = joiningConnection(session) else { continue }
            for entry in waiting {
                flush.answer(entry.slot, to: connection, panel: index) { out, _ in
                    MessageEncoder.encode(.error(.unavailable, message), format: entry.format, id: entry.id, into: &out)
                }
            }
        }
        clusterState.inFlight = [:]
    }

    /// A relayed command unanswered for `ClusterSetup.answerTimeoutMs`: its answer was lost
    /// on the way, and nothing else would ever say so. Seen under load (`bench/cluster.sh`,
    /// fan-out over three nodes): a follower closed its link to a busy leader as silent and
    /// dialled again; the leader went on writing the answers to its members' re-joins to
    /// the old link until it noticed the close, and dropped them then, while the new link
    /// stayed up. Those members waited for ever and heard no event. The panel
    /// resynchronises as after a dropped link: what waits is answered `ERROR unavailable`,
    /// the members join again. On `queue` (`ClusterContext`'s node timer).
    func checkAnswers() {
        assertOnQueue()
        expireJoins()
        guard let cluster, let leader = followedLeader else { return }
        let limit = cluster.setup.answerTimeoutMs
        let now = clock.now().milliseconds
        guard clusterState.inFlight.values.contains(where: { $0.contains { now - $0.sentAtMs >= limit } }) else { return }
        cluster.log.warning("no answer from a panel's leader in time: the panel resynchronises", ["panel": config.id, "leader": leader, "ms": "\(limit)"])
        var flush = FlushList()
        resync(from: leader, because: "panel \(config.id)'s leader \(leader) did not answer within \(limit) ms", flush: &flush)
        finishBatch(&flush)
    }

    /// The last link to `node` dropped. If it leads this panel, what was sent to it is
    /// lost, and so are the events it sent meanwhile; and if it is alive it has ended this
    /// node's sessions' grants. Members are told the grants they knew of ended, then join
    /// again (a new link is dialled for it) and get a fresh snapshot: the truth again.
    func leaderLinkDown(_ node: String) {
        assertOnQueue()
        guard clusterState.leaderNode == node, clusterState.block == nil else { return }
        var flush = FlushList()
        resync(from: node, because: "the link to panel \(config.id)'s leader \(node) dropped before it answered", flush: &flush)
        finishBatch(&flush)
    }

    /// This node's lease lapsed (`ClusterContext.beginLapse`): what the leader would still
    /// answer or send cannot be trusted, so a panel it follows answers what waits and tells
    /// its members the grants they knew of ended, now. On `queue`.
    func leaseLapsed() {
        assertOnQueue()
        guard let leader = followedLeader else { return }
        var flush = FlushList()
        resync(
            from: leader, because: "this node's lease lapsed (it was paused or cut off from etcd) before panel \(config.id)'s leader \(leader) answered",
            rejoin: false, flush: &flush)
        finishBatch(&flush)
    }

    /// The lease is safe again, first step (`ClusterContext.awaitSafeLease`): the same, and
    /// the members wait to join again, so nothing the leader sends reaches them before
    /// their fresh snapshot. The node reads leaders' frames again only after every panel
    /// took this step, and the re-joins are sent only after that (`rejoinAfterLapse`):
    /// sent earlier, their answers could arrive while frames are still dropped, and the
    /// members would wait for them for ever. On `queue`.
    func leaseRegained() {
        assertOnQueue()
        guard followedLeader != nil else { return }
        leaseLapsed()
        holdMembersForRejoin()
    }

    /// Every member waits for its re-join's snapshot: nothing the leader sends reaches it
    /// before that.
    private func holdMembersForRejoin() {
        for (session, connection) in members { clusterState.pendingJoins[session] = connection }
        members = [:]
        memberCount.store(0, ordering: .relaxed)
    }

    /// The second step: the members that wait join again at the leader; not if another
    /// lapse began meanwhile (its own first step will lead here again). On `queue`.
    func rejoinAfterLapse() {
        assertOnQueue()
        guard let cluster, !cluster.isLapsed, let leader = followedLeader else { return }
        rewait(at: leader, address: clusterState.leaderAddress)
        guard !clusterState.pendingJoins.isEmpty else { return }
        rejoin(at: leader, address: clusterState.leaderAddress)
    }

    /// The leader of this panel when it is another node.
    private var followedLeader: String? {
        guard let leader = clusterState.leaderNode, leader != cluster?.node, clusterState.block == nil else { return nil }
        return leader
    }

    private func track(_ ownership: RelayPayload.Ownership?) {
        switch ownership {
        case .granted(let button, let owner, let fence)?:
            if let b = buttonIndex[button] { clusterState.knownGrants[b] = (owner, fence) }
        case .released(let button, let fence, let reason)?:
            if let b = buttonIndex[button] {
                clusterState.knownGrants[b] = nil
                if let fence, !clusterState.sessionGrants.isEmpty { sessionGrantEnded(button: b, fence: fence, reason: reason) }
            }
        case nil:
            break
        }
    }
}
