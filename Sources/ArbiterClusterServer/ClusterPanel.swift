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
/// ends that at the server's stop. Its host's state, and its own, are read through
/// `ClusterPanelPart`, as each part of its work reads them.
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

    @inline(__always) func deliverRemoteReply(_ reply: PanelReply) {
        guard let remote = remoteRequester else { return }
        duties.deliverRemoteReply(reply, to: remote)
    }

    func replyHistoryRemotely(_ count: Int, access: Access, format: WireFormat, id: CommandID?) {
        duties.replyHistoryRemotely(count, access: access, format: format, id: id)
    }
}
