import ArbiterCluster
import ArbiterCore
import ArbiterIO
import ArbiterServer
import ArbiterWire
import Dispatch
import Synchronization

/// One panel in cluster mode: its `PanelRole`, leading or following as etcd says, with
/// the state each side keeps (`PanelClusterState`). It works on its host's core, members
/// and output, and everything here belongs to the host's queue, as the host's own state
/// does. The host holds it as its role, and it holds the host: `ClusterContext.stopRelay`
/// ends that at the server's stop. Its work is done here and in its parts, views of it
/// made where they are used (`ClusterPanelPart`), which read its host's state as it does.
final class ClusterPanel: PanelRole, ClusterPanelPart, @unchecked Sendable {
    let host: PanelHost
    let cluster: ClusterContext?
    /// Whether this node decides the panel, who leads it, relayed members.
    @exclusivity(unchecked) var clusterState = PanelClusterState()
    /// The relayed session the command being run came from.
    @exclusivity(unchecked) var remoteRequester: RemoteRequester?

    init(host: PanelHost, cluster: ClusterContext) {
        self.host = host
        self.cluster = cluster
    }

    static let retryHint = "nothing was done, try again in a second or two"

    /// The panel itself, as a `ClusterPanelPart`.
    @inline(__always) var panel: ClusterPanel { self }

    // MARK: PanelRole

    func execute(_ command: ParsedCommand, receivedAt: Int64, from connection: Connection, flush: inout FlushList) {
        assertOnQueue()
        executeInCluster(command, receivedAt: receivedAt, from: connection, flush: &flush)
    }

    func executePress(_ press: Press<Int>, receivedAt: Int64, format: WireFormat, from connection: Connection, flush: inout FlushList) {
        assertOnQueue()
        executePressInCluster(press, receivedAt: receivedAt, format: format, from: connection, flush: &flush)
    }

    func disconnect(_ connection: Connection, flush: inout FlushList) {
        assertOnQueue()
        disconnectInCluster(connection, flush: &flush)
    }

    /// What the visit relays goes out after the queue is left, so the replies find the
    /// queue free (`PanelClusterState.deferredSends`); in order, before the reactor runs
    /// anything else.
    @inline(__always)
    func visit(_ body: () -> Void) {
        // The non-generic `sync`: the generic one costs about 1,400 instructions more per
        // visit on Linux (its rethrowing helper's closures), on every relayed press.
        var sends: [FollowerBooks.DeferredSend] = []
        host.queue.sync {
            clusterState.following.deferredSends = []
            body()
            sends = clusterState.following.deferredSends ?? []
            clusterState.following.deferredSends = nil
        }
        guard let cluster else { return }
        for send in sends { cluster.send(encoded: send.frame, toNode: send.node, address: send.address, leaseEpoch: send.leaseEpoch) }
    }

    var decides: Bool { clusterState.block != nil }

    /// Whether this node may decide the panel at this instant (`Leadership.mayDecideNow`).
    @inline(__always) func mayDecideNow() -> Bool { leadership.mayDecideNow() }

    var leaderElsewhere: (node: String, address: String?)? {
        guard let leader = clusterState.leader.node, leader != cluster?.node else { return nil }
        return (leader, clusterState.leader.address)
    }

    /// The leader of this panel when it is another node.
    var followedLeader: String? {
        guard let leader = clusterState.leader.node, leader != cluster?.node, clusterState.block == nil else { return nil }
        return leader
    }

    /// A node that decides the panel leads it, whether or not etcd's word of its own
    /// election has been read yet.
    var leaderNode: String? { clusterState.block != nil ? cluster?.node : clusterState.leader.node }

    /// A leader's decisions hold only under its lease: written after it lapsed (a pause
    /// between here and the write), they are dropped instead (`ClusterContext.outputStands`).
    func markDecisionOutput(_ flush: inout FlushList) {
        if let cluster, clusterState.block != nil { flush.outputEpoch = cluster.outputEpoch }
    }

    func eventDecided(_ event: PanelEvent) {
        if !clusterState.relayed.memberNodes.isEmpty { duties.relayEvent(event) }
        if case .released(let button, let reason, let owner) = event.kind, !clusterState.relayed.remoteSessions.isEmpty {
            duties.tellNodeOfGrantEnded(button: button, reason: reason, owner: owner)
        }
    }

    var hasRemoteWaiters: Bool { !clusterState.relayed.remoteWaiters.isEmpty }

    func waitersMayHaveLeft(_ events: [PanelEvent]) { duties.tellNodesOfDequeuedWaiters(events) }

    @inline(__always) func deliverRemoteNotice(_ notice: PanelOutput.Notice) { duties.deliverRemoteNotice(notice) }

    func deferRemoteReply() {
        guard let remote = remoteRequester else { return }
        clusterState.relayed.deferredReplies[remote.session, default: []].append(remote)
    }

    /// A relayed session's client address is not sent to the leader: its player is
    /// matched by its name on its node.
    var requesterAddress: String? { remoteRequester.map { "node:" + $0.node } }

    @inline(__always) func deliverRemoteReply(_ reply: PanelReply) {
        guard let remote = remoteRequester else { return }
        duties.deliverRemoteReply(reply, to: remote)
    }

    func replyHistoryRemotely(_ count: Int, access: Access, format: WireFormat, id: CommandID?) {
        duties.replyHistoryRemotely(count, access: access, format: format, id: id)
    }

    // MARK: A local session's commands and close

    /// A local session's command in cluster mode: decided here if this node leads the
    /// panel, else relayed to the leader, else `ERROR unavailable`. On `queue`.
    func executeInCluster(_ command: ParsedCommand, receivedAt: Int64, from connection: Connection, flush: inout FlushList) {
        if case .join = command.request { clusterState.following.memberIdentity[connection.session] = (connection.name, connection.key) }
        var press: Press<Int>?
        if case .press(let p) = command.request, let button = buttonIndex[p.button] { press = p.resolved(panel: index, button: button) }
        if let press, !clusterState.grants.failoverEnded.isEmpty,
            failover.answerReleaseOfFailoverEnded(press, from: connection, format: command.format, id: command.id, flush: &flush)
        {
            return
        }
        if clusterState.block != nil, mayDecideNow() {
            if case .press(let p) = command.request, let refusal = leadership.fenceRefusal(resolve(p)) {
                return refuse(refusal, to: connection, format: command.format, id: command.id, flush: &flush)
            }
            if let press { failover.notePressSent(press, session: connection.session) }
            executeHere(
                command, receivedAt: receivedAt, session: connection.session, name: connection.name, key: connection.key, from: connection, flush: &flush)
            return leadership.afterDecision()
        }
        follower.relay(command.request, press: press, format: command.format, id: command.id, from: connection, flush: &flush)
    }

    func executePressInCluster(_ press: Press<Int>, receivedAt: Int64, format: WireFormat, from connection: Connection, flush: inout FlushList) {
        if !clusterState.grants.failoverEnded.isEmpty, failover.answerReleaseOfFailoverEnded(press, from: connection, format: format, id: nil, flush: &flush) {
            return
        }
        if clusterState.block != nil, mayDecideNow() {
            if let refusal = leadership.fenceRefusal(.press(press)) { return refuse(refusal, to: connection, format: format, id: nil, flush: &flush) }
            failover.notePressSent(press, session: connection.session)
            counters.commands += 1
            run(
                .press(press), access: access(key: connection.key), now: Instant(nanoseconds: receivedAt), replyFormat: format, id: nil,
                session: connection.session, name: connection.name, from: connection, flush: &flush)
            return leadership.afterDecision()
        }
        follower.relayPress(press, format: format, from: connection, flush: &flush)
    }

    /// A local session closed (cluster mode): its grants end here if this node decides,
    /// else the leader's node is told.
    func disconnectInCluster(_ connection: Connection, flush: inout FlushList) {
        var wasMember = false
        if members.removeValue(forKey: connection.session) != nil {
            host.memberCount.subtract(1, ordering: .relaxed)
            wasMember = true
        }
        waiters.removeValue(forKey: connection.session)
        clusterState.following.waitingPlaces.removeValue(forKey: connection.session)
        clusterState.following.waitNames.removeValue(forKey: connection.session)
        // One waiting for its re-join's snapshot is a member to the leader all the same.
        if clusterState.following.pendingJoins.removeValue(forKey: connection.session) != nil { wasMember = true }
        clusterState.following.memberIdentity.removeValue(forKey: connection.session)
        clusterState.following.inFlight.removeValue(forKey: connection.session)
        clusterState.following.parkedJoins.removeValue(forKey: connection.session)
        clusterState.following.owedReleases.removeValue(forKey: connection.session)
        clusterState.grants.sessionGrants.removeValue(forKey: connection.session)
        clusterState.grants.failoverEnded.removeValue(forKey: connection.session)
        clusterState.grants.leaderEnded.removeValue(forKey: connection.session)
        guard let cluster else { return }
        if clusterState.block != nil {
            guard mayDecideNow() else { return }
            output.removeAll()
            core.disconnect(session: connection.session, now: clock.now(), into: &output)
            deliver(replyTo: nil, format: .text, id: nil, flush: &flush)
            return
        }
        if let leader = clusterState.leader.node, leader != cluster.node {
            let lease = cluster.synchronisedLease
            failover.tellGone(connection.session, lease: lease, to: leader, cluster)
            if wasMember { clusterState.following.goneMembers[connection.session] = (clock.now().milliseconds, lease) }
        }
    }

    // MARK: Who leads

    /// etcd shows a new holder of the panel's election key (nil: vacant). Members here are
    /// owed `RELEASED ... reason=failover` for the old term's grants they knew of; with a
    /// new leader on another node they join it again, and its JOIN replies are their fresh
    /// snapshots. On `queue` (the runtime's callback).
    func leaderChanged(node: String?, address: String?, term: Int64?) {
        assertOnQueue()
        guard let cluster else { return }
        if node == cluster.node {
            // This node's own key: `Leadership.becameLeader`, once its fences are reserved, starts it.
            clusterState.leader.node = node
            clusterState.leader.address = cluster.setup.advertise
            clusterState.leader.term = term
            return
        }
        // etcd shows another holder while this node still decides (the runtime's step-down
        // may come after this news): stop first, so members here get their failover
        // releases before they are joined to the new leader.
        if let block = clusterState.block { leadership.stopDeciding(term: block.term, reason: .deposed) }
        let termChanged = term != clusterState.leader.term || node != clusterState.leader.node
        clusterState.leader.node = node
        clusterState.leader.address = address
        clusterState.leader.term = term
        guard termChanged else { return }
        var flush = FlushList()
        failover.failInFlight(because: "panel \(config.id)'s leader changed before it answered", flush: &flush)
        failover.owedFailover(newTerm: term, flush: &flush)
        waits.endWaits(flush: &flush)
        if let node, term != nil { joins.rejoin(at: node, address: address) }
        finishBatch(&flush)
    }
}
