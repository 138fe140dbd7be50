import ArbiterCore
import ArbiterIO
import Dispatch

/// One `GET /api/panels` on a node that follows some of the panels: each such panel's
/// state asked of its leader's node, then the response written in the request's place
/// among the connection's pipelined requests (the connection waits in
/// `ConnectionStateMachine.State.httpAnswering` meanwhile, and its later requests are
/// served after it). A panel whose leader does not answer within `deadlineMs` (it died,
/// or stepped down and stays silent) is shown as this node sees it.
///
/// Owned by the reactor's queue: answers come on a relay link's or a panel's queue and
/// are handed there.
final class PanelsAnswer: @unchecked Sendable {
    /// A leader's answer takes a round trip and one visit to the panel's queue; a second
    /// is the time a leader may be heard from at all before its links count as silent.
    static let deadlineMs = 1_000

    private let reactor: Reactor
    private let connection: Connection
    private let keepAlive: Bool
    private let headOnly: Bool
    private var objects: [[UInt8]]
    /// Index of the entry awaited, and its query's id.
    private var awaited: [Int: UInt64] = [:]
    private var finished = false

    init(reactor: Reactor, connection: Connection, entries: [HTTPRouter.PanelEntry], keepAlive: Bool, headOnly: Bool) {
        self.reactor = reactor
        self.connection = connection
        self.keepAlive = keepAlive
        self.headOnly = headOnly
        self.objects = entries.map(\.localJSON)
        reactor.assertOnQueue()
        guard let cluster = reactor.server.cluster else { return }
        for (index, entry) in entries.enumerated() {
            guard case .leader(let node, let address, let panel, _) = entry else { continue }
            let id = cluster.queryState(of: panel, leader: node, address: address) { [self] state in
                reactor.queue.async { self.arrived(index, state) }
            }
            if let id { awaited[index] = id }
        }
    }

    /// Sends the response at once if nothing is awaited, else when the last answer comes
    /// or the deadline passes. On the reactor's queue.
    func start() {
        reactor.assertOnQueue()
        if awaited.isEmpty { return finish() }
        reactor.queue.asyncAfter(deadline: .now() + .milliseconds(Self.deadlineMs)) { [self] in finish() }
    }

    private func arrived(_ index: Int, _ state: [UInt8]) {
        reactor.assertOnQueue()
        guard !finished, awaited.removeValue(forKey: index) != nil else { return }
        objects[index] = state
        if awaited.isEmpty { finish() }
    }

    private func finish() {
        reactor.assertOnQueue()
        guard !finished else { return }
        finished = true
        for id in awaited.values { reactor.server.cluster?.stateQueries.forget(id) }
        awaited.removeAll()
        // Closed meanwhile (the peer hung up, the server is stopping): nothing to write.
        guard connection.machine.answerArrived() else { return }
        let response = HTTPRouter(server: reactor.server).panelsResponse(objects, keepAlive: keepAlive, headOnly: headOnly)
        var flush = FlushList()
        if keepAlive {
            flush.append(to: connection, raw: true) { out, _ in out.append(contentsOf: response) }
            // The requests that arrived behind this one.
            reactor.serveHTTP(connection, flush: &flush)
        } else {
            reactor.finishHTTP(connection, response, flush: &flush)
        }
        flush.flushAll()
    }
}
