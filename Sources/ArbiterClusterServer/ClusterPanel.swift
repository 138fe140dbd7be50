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
/// ends that at the server's stop.
final class ClusterPanel: PanelRole, @unchecked Sendable {
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

    // MARK: The host's panel, as the role code reads it

    var index: Int { host.index }
    var config: PanelConfig { host.config }
    var queue: DispatchQueue { host.queue }
    var names: PanelNames { host.names }
    var buttonIndex: IDTable<Int> { host.buttonIndex }
    var clock: any TimeSource { host.clock }
    var core: PanelCore {
        _read { yield host.roleCore }
        _modify { yield &host.roleCore }
    }
    var members: [SessionID: Connection] {
        _read { yield host.roleMembers }
        _modify { yield &host.roleMembers }
    }
    var waiters: [SessionID: Connection] {
        _read { yield host.roleWaiters }
        _modify { yield &host.roleWaiters }
    }
    var output: PanelOutput {
        _read { yield host.roleOutput }
        _modify { yield &host.roleOutput }
    }
    var counters: PanelCounters {
        _read { yield host.roleCounters }
        _modify { yield &host.roleCounters }
    }
    var history: HistoryRing { _read { yield host.roleHistory } }
    var sessions: Locked<[SessionID: Connection]> { host.sessions }

    /// Traps when the caller is not on the panel's queue, in release builds too: asked once
    /// where work enters from another thread (a runtime callback, a relay frame, a timer, a
    /// reactor's visit), not at each access, so it costs a few dozen instructions against
    /// the thousands of a relayed command.
    @inline(__always) func assertOnQueue() { dispatchPrecondition(condition: .onQueue(host.queue)) }

    func access(key: String?) -> Access { host.access(key: key) }

    func resolve(_ press: Press<String>) -> PanelRequest { host.resolve(press) }

    func executeHere(
        _ command: ParsedCommand, receivedAt: Int64, session: SessionID, name: String, key: String?, from connection: Connection?,
        flush: inout FlushList
    ) {
        host.executeHere(command, receivedAt: receivedAt, session: session, name: name, key: key, from: connection, flush: &flush)
    }

    func run(
        _ request: PanelRequest, access: Access, now: Instant, replyFormat: WireFormat, id: CommandID?,
        session: SessionID, name: String, from connection: Connection?, flush: inout FlushList
    ) {
        host.run(request, access: access, now: now, replyFormat: replyFormat, id: id, session: session, name: name, from: connection, flush: &flush)
    }

    func refuse(_ message: String, to connection: Connection?, format: WireFormat, id: CommandID?, flush: inout FlushList) {
        host.refuse(message, to: connection, format: format, id: id, flush: &flush)
    }

    @discardableResult
    func deliver(replyTo requester: Connection?, format: WireFormat, id: CommandID?, undoable: Bool = false, flush: inout FlushList) -> Bool {
        host.deliver(replyTo: requester, format: format, id: id, undoable: undoable, flush: &flush)
    }

    func encodeHistory(_ entries: [HistoryRing.Entry], format: WireFormat, id: CommandID?, into out: inout [UInt8]) {
        host.encodeHistory(entries, format: format, id: id, into: &out)
    }

    func stateJSON() -> [UInt8] { host.stateJSON() }

    func finishBatch(_ flush: inout FlushList) { host.finishBatch(&flush) }

    func finishVisit() { host.finishVisit() }

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
        if !clusterState.relayed.memberNodes.isEmpty { relayEvent(event) }
        if case .released(let button, let reason, let owner) = event.kind, !clusterState.relayed.remoteSessions.isEmpty {
            tellNodeOfGrantEnded(button: button, reason: reason, owner: owner)
        }
    }

    var hasRemoteWaiters: Bool { !clusterState.relayed.remoteWaiters.isEmpty }

    func waitersMayHaveLeft(_ events: [PanelEvent]) { tellNodesOfDequeuedWaiters(events) }

    func deliverRemoteReply(_ reply: PanelReply) {
        guard let remote = remoteRequester else { return }
        deliverRemoteReply(reply, to: remote)
    }
}
