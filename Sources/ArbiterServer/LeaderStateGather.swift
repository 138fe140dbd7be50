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
    /// Fires `finish` at the deadline; cancelled by `finish`, which lets go of its handler
    /// and so of this gather.
    private var deadline: DispatchSourceTimer?

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
        // A timer cancelled at the finish, not an `asyncAfter`: that one kept a finished
        // gather, its connection and its server for the rest of the second, and a server
        // stopped meanwhile was still alive when the test process exited (LeakSanitizer,
        // ClusterPanelStateTests). Capturing this gather weakly instead made release
        // builds warn that the reference would always be nil: the optimizer cannot see
        // that the questions awaited (`RelayQueries`) keep it alive.
        let timer = DispatchSource.makeTimerSource(queue: reactor.queue)
        timer.schedule(deadline: .now() + .milliseconds(Self.deadlineMs))
        timer.setEventHandler { [self] in finish() }
        deadline = timer
        timer.resume()
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
        // The handler holds this gather: let go of it now, not when the cancel completes.
        deadline?.setEventHandler(handler: nil)
        deadline?.cancel()
        deadline = nil
        for id in awaited.values { reactor.server.cluster?.forgetStateQuery(id) }
        awaited.removeAll()
        done(answers)
    }
}
