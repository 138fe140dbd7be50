import ArbiterCore
import Dispatch

/// Asks the leaders of the panels this node follows for their state (`RelayMessage
/// .stateQuery`), for a request that must show every panel as its leader has it
/// (`GET /api/panels`, `PANELS`), and hands what came back to `done` once every leader
/// answered or `deadlineMs` passed (a leader that died, or stepped down and stays
/// silent, is then missing from it, and the caller shows this node's own view of that
/// panel).
///
/// Owned by the reactor's queue: answers come on a relay link's or a panel's queue and
/// are handed there; `done` runs there.
final class LeaderStateGather: @unchecked Sendable {
    /// A leader's answer takes a round trip and one visit to the panel's queue; a second
    /// is the time a leader may be heard from at all before its links count as silent.
    static let deadlineMs = 1_000

    /// One panel to ask about: its place in the caller's list, and its leader.
    struct Question {
        let index: Int
        let panel: String
        let leader: String
        let address: String?
    }

    private let reactor: Reactor
    private let done: ([Int: [UInt8]]) -> Void
    /// The answers so far, by the caller's index.
    private var answers: [Int: [UInt8]] = [:]
    /// Index of each question awaited, and its query's id.
    private var awaited: [Int: UInt64] = [:]
    private var finished = false

    init(reactor: Reactor, questions: [Question], done: @escaping ([Int: [UInt8]]) -> Void) {
        self.reactor = reactor
        self.done = done
        reactor.assertOnQueue()
        guard let cluster = reactor.server.cluster else { return }
        for question in questions {
            let index = question.index
            let id = cluster.queryState(of: question.panel, leader: question.leader, address: question.address) { [self] state in
                reactor.queue.async { self.arrived(index, state) }
            }
            if let id { awaited[index] = id }
        }
    }

    /// Calls `done` at once if nothing is awaited (no leader could be asked), else when
    /// the last answer comes or the deadline passes. On the reactor's queue.
    func start() {
        reactor.assertOnQueue()
        if awaited.isEmpty { return finish() }
        // Weakly: the questions awaited keep this alive (`RelayQueries` holds their
        // waiters) until each is answered or forgotten here. A strong capture kept a
        // finished gather, its connection and its server for the rest of the second; a
        // server stopped meanwhile was then still alive when the test process exited
        // (LeakSanitizer, ClusterPanelStateTests).
        reactor.queue.asyncAfter(deadline: .now() + .milliseconds(Self.deadlineMs)) { [weak self] in self?.finish() }
    }

    private func arrived(_ index: Int, _ state: [UInt8]) {
        reactor.assertOnQueue()
        guard !finished, awaited.removeValue(forKey: index) != nil else { return }
        answers[index] = state
        if awaited.isEmpty { finish() }
    }

    private func finish() {
        reactor.assertOnQueue()
        guard !finished else { return }
        finished = true
        for id in awaited.values { reactor.server.cluster?.stateQueries.forget(id) }
        awaited.removeAll()
        done(answers)
    }
}
