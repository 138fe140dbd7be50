import ArbiterServer
import ArbiterCluster
import ArbiterCore
import ArbiterIO
import ArbiterWire
import Dispatch

/// Cluster mode, the side of a node that does not decide the panel: its local sessions'
/// commands go to the leader's node (`ClusterPanel.executeInCluster` routes them), its
/// replies and events come back through `RelayInbox` (term fencing) and are written to the
/// local sessions (`FollowerRelay+Replies`).
struct FollowerRelay: ClusterPanelPart {
    let panel: ClusterPanel

    /// A local session's press, its ids looked up by the reactor, to the leader's node in one
    /// pass (`RelayFrameEncoder.encodePress`); `relay` takes any other command. Inlined in
    /// `ClusterPanel.executePressInCluster`, its one caller, as it was written there.
    @inline(__always)
    func relayPress(_ press: Press<Int>, format: WireFormat, from connection: Connection, flush: inout FlushList) {
        guard
            let (cluster, leader, unanswered) = relayRoute(
                isJoin: false, isRelease: press.verb != .down, format: format, id: nil, from: connection, flush: &flush)
        else { return }
        waits.notePress(press.verb, button: press.button, connection)
        let serial = nextSerial()
        let frame = RelayFrameEncoder.encodePress(
            origin: cluster.node, session: UInt64(connection.session.number), sessionName: connection.name, key: connection.key, panel: config.id,
            json: format == .json, term: panel.clusterState.leader.term ?? 0, verb: press.verb.rawValue, button: config.buttons[press.button].id,
            fence: press.fence, arrivedAt: clock.now().milliseconds, incarnation: cluster.setup.incarnation, serial: serial,
            lease: cluster.synchronisedLease)
        send(
            frame, serial: serial, isJoin: false, unanswered: unanswered, to: leader, cluster, format: format, id: nil, from: connection,
            press: press, flush: &flush)
    }

    /// To the leader's node, or `ERROR unavailable` while no other node is known to lead.
    /// `press`: the request's press with its button looked up, if it is one.
    func relay(
        _ request: Request, press: Press<Int>?, format: WireFormat, id: CommandID?, from connection: Connection,
        flush: inout FlushList
    ) {
        let isJoin: Bool
        if case .join = request { isJoin = true } else { isJoin = false }
        let isRelease: Bool
        if case .press(let press) = request { isRelease = press.verb != .down } else { isRelease = false }
        guard let (cluster, leader, unanswered) = relayRoute(isJoin: isJoin, isRelease: isRelease, format: format, id: id, from: connection, flush: &flush)
        else { return }
        if let press { waits.notePress(press.verb, button: press.button, connection) }
        let (message, serial) = commandFrame(
            cluster, session: connection.session, name: connection.name, key: connection.key,
            command: RelayPayload.command(request, format: format, id: id, term: panel.clusterState.leader.term ?? 0))
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
        guard let cluster, let leader = panel.clusterState.leader.node, leader != cluster.node, panel.clusterState.leader.term != nil,
            case let unsafe = cluster.mayNotRelay(), isRelease || !unsafe
        else {
            if isJoin {
                joins.park(join: connection, format: format, id: id, flush: &flush)
                return nil
            }
            if let cluster, cluster.isLapsed {
                refuse(
                    "this node cannot reach etcd right now (its lease lapsed), so it cannot reach panel \(config.id)'s leader safely; \(ClusterPanel.retryHint)",
                    to: connection, format: format, id: id, flush: &flush)
                return nil
            }
            refuse(
                "panel \(config.id) has no leader right now (a failover is under way, or etcd has no majority); \(ClusterPanel.retryHint)",
                to: connection, format: format, id: id, flush: &flush)
            return nil
        }
        guard cluster.canRelay else {
            refuse(
                "panel \(config.id)'s leader \(leader) cannot be reached from this node yet; \(ClusterPanel.retryHint)",
                to: connection, format: format, id: id, flush: &flush)
            return nil
        }
        // The election key names the leader; its address comes with its registration,
        // which this node reads up to a second later when the leader is a node that has
        // just started. Sent before, the frame would be dropped at the dial and the press
        // answered "may or may not have been done" when nothing was. A JOIN is sent: a
        // lost one waits and is sent again (`FailoverBooks.failInFlight`).
        if panel.clusterState.leader.address == nil { panel.clusterState.leader.address = cluster.address(ofNode: leader) }
        if panel.clusterState.leader.address == nil, !isJoin, !cluster.hasLinkUp(to: leader) {
            refuse(
                "panel \(config.id)'s leader \(leader) is not known to this node yet (its address is read from etcd within a second); \(ClusterPanel.retryHint)",
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
        if let press { failover.notePressSent(press, session: connection.session) }
        if unanswered {
            // A release while this node's lease is unsafe (`relayRoute`): its answer would
            // be dropped, so none is awaited; the session is answered now.
            post(frame, to: leader, cluster, leaseEpoch: 0)
            return refuse(
                "this node cannot reach etcd right now (its lease lapsed); the release was passed on to panel \(config.id)'s leader \(leader) all the same, and it may or may not have been done; send it again in a second or two",
                to: connection, format: format, id: id, flush: &flush)
        }
        // Before the frame can leave: its reply may come back at once.
        let slot = connection.reserveReplySlot()
        let sentAt = clock.now().milliseconds
        let kind: InFlight.Kind
        if isJoin {
            kind = .join(slot: slot, since: sentAt, attempt: 0)
        } else if let press, press.verb == .down {
            kind = .down(slot: slot, button: press.button)
        } else {
            kind = .command(slot: slot)
        }
        // Under this node's lease: written after it lapsed (a pause on the way), the leader
        // could run it for a session it has ended since.
        post(frame, to: leader, cluster, leaseEpoch: cluster.outputEpoch)
        if isJoin { panel.clusterState.following.pendingJoins[connection.session] = connection }
        panel.clusterState.following.inFlight[connection.session, default: []].append(
            InFlight(format: format, id: id, kind: kind, serial: serial, sentAtMs: sentAt))
    }

    /// Hands a command's frame to the relay: after the panel's queue is left when a visit
    /// defers its sends (`SessionRunner.visit`), else now.
    private func post(_ frame: [UInt8], to leader: String, _ cluster: ClusterContext, leaseEpoch: UInt64) {
        if panel.clusterState.following.deferredSends != nil {
            panel.clusterState.following.deferredSends?.append((frame, leader, panel.clusterState.leader.address, leaseEpoch))
        } else {
            _ = cluster.send(encoded: frame, toNode: leader, address: panel.clusterState.leader.address, leaseEpoch: leaseEpoch)
        }
        cluster.relayedOut.add(1, ordering: .relaxed)
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
        panel.clusterState.following.lastSerial += 1
        return panel.clusterState.following.lastSerial
    }
}
