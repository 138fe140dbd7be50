import ArbiterCluster
import ArbiterCore
import ArbiterIO
import ArbiterServer
import ArbiterWire
import Dispatch
import Synchronization

/// Code that works on one `ClusterPanel`: the panel itself, and each part of its work,
/// a view of the panel made where it is used (`Leadership`, `LeaderDuties`,
/// `FollowerRelay`, `FailoverBooks`, `QueueWaits`, `MemberJoins`). A part holds nothing
/// but the panel: the state is the panel's (`panel.clusterState`) and its host's (through
/// the accessors below), changed in place, on the panel's queue as all of it is.
///
/// A view is one reference, made and dropped inline: in a release build (the module is
/// optimised whole) making one costs nothing, no retain, no call; an `unowned(unsafe)`
/// reference instead would be retained at each use. The panel's own state is read as
/// `panel.clusterState`, the stored property itself: an accessor here would be a
/// coroutine, which the optimiser leaves as a call in a larger function, its frame
/// allocated at each access (`notePressSent`, on every relayed press: callgrind).
protocol ClusterPanelPart {
    var panel: ClusterPanel { get }
}

extension ClusterPanelPart {
    // MARK: The parts

    @inline(__always) var leadership: Leadership { Leadership(panel: panel) }
    @inline(__always) var duties: LeaderDuties { LeaderDuties(panel: panel) }
    @inline(__always) var follower: FollowerRelay { FollowerRelay(panel: panel) }
    @inline(__always) var failover: FailoverBooks { FailoverBooks(panel: panel) }
    @inline(__always) var waits: QueueWaits { QueueWaits(panel: panel) }
    @inline(__always) var joins: MemberJoins { MemberJoins(panel: panel) }

    // MARK: The node, and the host's panel as the role code reads it

    @inline(__always) var cluster: ClusterContext? { panel.cluster }

    @inline(__always) var host: PanelHost { panel.host }
    @inline(__always) var index: Int { host.index }
    @inline(__always) var config: PanelConfig { host.config }
    @inline(__always) var queue: DispatchQueue { host.queue }
    @inline(__always) var names: PanelNames { host.names }
    @inline(__always) var buttonIndex: IDTable<Int> { host.buttonIndex }
    @inline(__always) var clock: any TimeSource { host.clock }
    @inline(__always) var core: PanelCore {
        _read { yield host.roleCore }
        nonmutating _modify { yield &host.roleCore }
    }
    @inline(__always) var members: [SessionID: Connection] {
        _read { yield host.roleMembers }
        nonmutating _modify { yield &host.roleMembers }
    }
    @inline(__always) var waiters: [SessionID: Connection] {
        _read { yield host.roleWaiters }
        nonmutating _modify { yield &host.roleWaiters }
    }
    @inline(__always) var output: PanelOutput {
        _read { yield host.roleOutput }
        nonmutating _modify { yield &host.roleOutput }
    }
    @inline(__always) var counters: PanelCounters {
        _read { yield host.roleCounters }
        nonmutating _modify { yield &host.roleCounters }
    }
    @inline(__always) var history: HistoryRing { _read { yield host.roleHistory } }
    @inline(__always) var sessions: Locked<[SessionID: Connection]> { host.sessions }

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
}
