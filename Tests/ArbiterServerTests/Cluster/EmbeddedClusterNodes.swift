import ArbiterCluster
import ArbiterClusterTestSupport
import ArbiterCore
import ArbiterIO
import ArbiterTestSupport
import Foundation
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// One to three cluster nodes with no listener and no sockets: each is a `ServerState`
/// wired as `ArbiterServer.start` wires cluster mode (config agreed in etcd, reactors,
/// runtime), its clients embedded connections fed bytes by hand (`EmbeddedClient`), its
/// relay links the in-process `TestRelayHub`. One `ManualClock` is the in-memory etcd's
/// (leases expire by it), every node's cluster clock (safe deadlines, lapses) and every
/// panel's: a failover happens when the test moves it past the TTL (`advance`), not after
/// seconds of real time.
///
/// What still runs on real timers, in the background: the runtime's control step (50 ms)
/// and lease tick (5 ms), the relay's join and re-wait retries (100-200 ms), the lapse's
/// looks (50 ms) and the node timer (500 ms). The test never waits on them by time: every
/// wait is for an event (`Changes`, bumped by etcd calls, relay frames, log lines and
/// every write to a client) or a queue entered with `sync`.
final class EmbeddedClusterNodes: @unchecked Sendable {
    /// Keepalives every 100 ms of the manual clock; a lease not renewed is gone 2 s after
    /// its last keepalive, and its holder stops deciding 300 ms before that.
    static let timing = ClusterTiming(ttlSeconds: 2, keepAliveIntervalMilliseconds: 100, safetyMarginMilliseconds: 300)
    /// How far `advance` moves the clock before every live node has renewed its lease (and
    /// a keepalive interval more, at most): well within TTL minus margin, so a node that
    /// renews stays safe throughout.
    static let stepMilliseconds: Int64 = 500

    let clock = ManualClock()
    let etcd: SharedEtcd
    let hub = TestRelayHub()
    let log = LogCapture()
    let panels: [PanelConfig]
    let timing: ClusterTiming
    let answerTimeoutMs: Int64
    let memberGraceMs: Int64
    let joinWaitMs: Int64
    /// Nodes that announce other relay features than this version's (an older version).
    let features: [String: Set<String>]
    private(set) var states: [String: ServerState] = [:]
    private(set) var leaseViews: [String: SharedEtcd.View] = [:]
    private(set) var controlViews: [String: SharedEtcd.View] = [:]
    private var nextPort = 40_000

    init(
        _ names: [String], panels: [PanelConfig] = [.demo], timing: ClusterTiming = EmbeddedClusterNodes.timing, answerTimeoutMs: Int64 = 5_000,
        memberGraceMs: Int64 = 15_000, joinWaitMs: Int64 = 10_000, features: [String: Set<String>] = [:]
    ) throws {
        self.features = features
        etcd = SharedEtcd(clock: clock)
        self.panels = panels
        self.timing = timing
        self.answerTimeoutMs = answerTimeoutMs
        self.memberGraceMs = memberGraceMs
        self.joinWaitMs = joinWaitMs
        for name in names { try start(name) }
    }

    deinit {
        for name in Array(states.keys) { stop(name) }
    }

    /// `ArbiterServer.start` without the listener: the config agreed with etcd, the
    /// reactors made (their queues marked, no epoll loop), then the runtime started.
    func start(_ name: String) throws {
        let lease = etcd.view()
        let control = etcd.view()
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.panels = panels
        configuration.logLevel = .warning
        configuration.reactorCount = 1
        configuration.commandsPerSecond = 0
        let sink = log.sink(prefix: "\(name) ")
        configuration.logSink = { line in
            sink(line)
            Changes.bump()
        }
        var setup = ClusterSetup(
            node: name, advertise: "127.0.0.1:1", key: Array("test cluster key".utf8), control: control, lease: lease,
            endpointsDescription: "in-memory", timing: timing, stepIntervalMilliseconds: 50, clock: clock)
        setup.answerTimeoutMs = answerTimeoutMs
        setup.memberGraceMs = memberGraceMs
        setup.joinWaitMs = joinWaitMs
        setup.hooks = etcd.view()
        if let features = features[name] { setup.features = features }
        setup.relay = hub.sender(for: name)
        configuration.cluster = setup
        let state = try ServerState(configuration: configuration, clock: clock)
        guard let context = state.cluster as? ClusterContext else { throw Failure(description: "no cluster context") }
        try context.prepare(panels: panels, journalFences: state.journalFences)
        try state.makeReactors()
        for reactor in state.reactors { reactor.markQueue() }
        hub.register(name, context)
        context.start()
        state.hooks?.start()
        states[name] = state
        leaseViews[name] = lease
        controlViews[name] = control
    }

    /// `ArbiterServer.stop` of `name`'s state: its runtime goes quiet without resigning,
    /// as a crashed process's would, and its connections close.
    private func stop(_ name: String) {
        guard let state = states.removeValue(forKey: name) else { return }
        state.beginShutdown()
        state.cluster?.stop(resign: false)
        for reactor in state.reactors { reactor.queue.sync { reactor.stop() } }
        for panel in state.panels { panel.queue.sync {} }
        for panel in state.panels { panel.queue.sync { panel.stop() } }
        state.hooks?.stop()
        state.cluster?.stopRelay()
    }

    /// `name` dies: its links go silent (the others hear them drop) and its lease is no
    /// longer renewed; the others take over once the test moves the clock past the TTL.
    func crash(_ name: String) {
        hub.cutOff(name)
        stop(name)
    }

    func context(_ name: String) -> ClusterContext? { states[name]?.cluster as? ClusterContext }

    func host(_ name: String, _ panel: String = "demo") -> PanelHost? { states[name]?.panelsByID[panel] }

    // MARK: Time

    /// Moves the clock by `milliseconds`, at most `stepMilliseconds` (and a keepalive
    /// interval) at a time; after each step of at least a keepalive interval (a keepalive is
    /// then due, whenever the last was sent), waits until every live node whose lease keeper
    /// holds a lease has renewed it at the new time (its keepalive answered or refused: an
    /// event, not a timer), then runs what would have fired by then: each reactor's sweep
    /// (owed replies), each node timer's checks, each panel's timers. `ticking: false`
    /// leaves the timers' work out (a test that needs the moment before the node timer
    /// notices a lapse).
    func advance(milliseconds total: Int64, ticking: Bool = true) {
        let interval = timing.keepAliveIntervalMilliseconds
        var left = total
        // Bounded: `left` shrinks by at least a millisecond each turn.
        while left > 0 {
            var step = min(left, Self.stepMilliseconds)
            // A remainder shorter than a keepalive interval goes with this step.
            if left - step < interval { step = left }
            left -= step
            // The node timer's lapse check, as it would have run (every 500 ms) while the
            // clock stood: a node that has not synchronised under its lease yet does not
            // notice that lease lapse.
            if ticking { for name in states.keys { context(name)?.checkLease() } }
            let before = renewals()
            clock.advance(milliseconds: step)
            if step >= interval {
                let renewed = eventually(seconds: 10) {
                    let now = renewals()
                    return before.allSatisfy { name, count in now[name].map { $0 > count } ?? true }
                }
                if !renewed { Issue.record("a live node never renewed its lease at the new time: \(describe(panels[0].id))") }
            }
            if ticking { tick() }
        }
    }

    /// etcd answers `name`'s lease calls again after an outage that outlived its lease:
    /// the next keepalive hears the lease is gone, a new one is granted, and the clock
    /// moves past the wait of a node whose lease ended before it campaigns again
    /// (`ClusterNode.leaseEnded`: TTL minus the margin).
    func etcdAnswersAgain(_ name: String) {
        leaseViews[name]?.setFailing(false)
        advance(milliseconds: timing.keepAliveIntervalMilliseconds)
        let regained = eventually { context(name)?.runtime.safeLeaseID() != nil }
        if !regained { Issue.record("\(name) never had a lease again: \(describe(panels[0].id))") }
        advance(milliseconds: timing.ttlSeconds * 1000 - timing.safetyMarginMilliseconds)
    }

    /// Each live node's keepalives answered or refused so far, for the nodes that hold a
    /// lease (one granting has nothing to renew).
    private func renewals() -> [String: Int] {
        states.keys.reduce(into: [:]) { result, name in
            guard let runtime = context(name)?.runtime, runtime.leaseID != nil else { return }
            let stats = runtime.statistics
            result[name] = stats.keepAlivesAnswered + stats.keepAlivesFailed
        }
    }

    /// Runs now what the real timers would run at the clock's time: the reactors' sweeps
    /// (owed replies), the node timer's checks (a lapse, vanished registrations, answers
    /// and joins past their deadlines, kept members past their grace) and the panels'
    /// timers.
    func tick() {
        for state in states.values {
            for reactor in state.reactors { reactor.queue.sync { reactor.tickForTesting() } }
            (state.cluster as? ClusterContext)?.checkNodes()
            for panel in state.panels { panel.queue.sync { panel.timerFired() } }
        }
    }

    /// Every live node's panel and reactor queues entered and left, twice: what a frame
    /// or a command set going in one node's queue, and what that sent on to another's, is
    /// done and written. For a test that checks something did not happen.
    func settle() {
        for _ in 0..<3 {
            for state in states.values {
                for panel in state.panels { panel.queue.sync {} }
                for reactor in state.reactors { reactor.queue.sync {} }
            }
        }
    }

    // MARK: Leaders

    /// The node deciding `panel`, once one does, every other node knows it and where it is,
    /// and it has read every node's registration; waits on `Changes` (the runtimes' etcd calls), at most `seconds`.
    func leader(of panel: String = "demo", seconds: Double = 10) -> String? {
        var settled: String?
        _ = eventually(seconds: seconds) {
            settled = settledLeader(of: panel)
            return settled != nil
        }
        return settled
    }

    func leaderAndFollower(of panel: String = "demo") throws -> (leader: String, follower: String) {
        let leader = try #require(self.leader(of: panel), "no settled leader: \(describe(panel))")
        let follower = try #require(followers(of: leader).first)
        return (leader, follower)
    }

    func followers(of leader: String) -> [String] { states.keys.filter { $0 != leader }.sorted() }

    private func settledLeader(of panel: String) -> String? {
        let deciding = states.keys.filter { context($0)?.runtime.canDecide(panel) != nil }
        guard deciding.count == 1, let leader = deciding.first else { return nil }
        // The leader has read every node's registration too (and the features it announces).
        guard states.keys.allSatisfy({ context(leader)?.address(ofNode: $0) != nil }) else { return nil }
        let known = states.keys.filter { $0 != leader }.allSatisfy { name in
            guard let host = host(name, panel), context(name)?.address(ofNode: leader) != nil else { return false }
            return host.queue.sync { host.clusterState.leader.node == leader }
        }
        return known ? leader : nil
    }

    func describe(_ panel: String) -> String {
        states.keys.sorted().map { name in
            guard let context = context(name), let host = host(name, panel) else { return "\(name): gone" }
            let leader = host.queue.sync { host.clusterState.leader.node }
            return "\(name): decides=\(context.runtime.canDecide(panel) != nil) lease=\(context.runtime.leaseID.map(String.init) ?? "none")"
                + " safe=\(context.runtime.leaseIsSafe()) lapsed=\(context.isLapsed) leader=\(leader ?? "none") \(context.runtime.statistics)"
        }.joined(separator: "; ") + "; clock \(clock.milliseconds()) ms; last log lines: " + log.lines.suffix(20).joined(separator: " | ")
    }

    // MARK: Clients

    /// A peer of `node` that has connected and said nothing yet.
    func connect(_ node: String) throws -> EmbeddedClient {
        guard let state = states[node] else { throw Failure(description: "no node \(node)") }
        nextPort += 1
        let connection = state.adopt(fd: -1, peer: "127.0.0.1:\(nextPort)", sink: EmbeddedSink(onWrite: { Changes.bump() }))
        connection.reactor.queue.sync {}
        return EmbeddedClient(connection)
    }

    /// `GET path` on `node`, as one HTTP request on a connection of its own: the response.
    func get(_ path: String, on node: String) throws -> String {
        let client = try connect(node)
        client.sendRaw("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        var response = ""
        _ = eventually {
            response += String(decoding: client.connection.sink?.take() ?? [], as: UTF8.self)
            guard let end = response.range(of: "\r\n\r\n"), let length = field("Content-Length:", in: response) else { return false }
            return response[end.upperBound...].utf8.count >= length
        }
        return response
    }

    private func field(_ name: String, in head: String) -> Int? {
        head.split(separator: "\r\n").first { $0.lowercased().hasPrefix(name.lowercased()) }.flatMap {
            Int($0.dropFirst(name.count).trimmingCharacters(in: .whitespaces))
        }
    }

    /// A peer of `node` past its HELLO.
    func client(_ node: String, name: String) throws -> EmbeddedClient {
        let client = try connect(node)
        client.send("HELLO \(name)")
        _ = try client.expect("OK HELLO")
        return client
    }

    /// A member of `panel` on `node`, past its JOIN reply; returns it and the reply.
    func member(_ node: String, name: String, panel: String = "demo") throws -> (EmbeddedClient, String) {
        let client = try self.client(node, name: name)
        client.send("JOIN \(panel)")
        return (client, try client.expect("OK JOIN"))
    }
}

/// One embedded connection of an `EmbeddedClusterNodes` node, read as a line client is:
/// every wait is for the node's next write to it (its sink bumps `Changes`), at most 10 s.
final class EmbeddedClient: @unchecked Sendable {
    let connection: Connection
    private var pending = ""
    private var unread: [String] = []
    /// Every line read so far, in order.
    private(set) var received: [String] = []

    init(_ connection: Connection) {
        self.connection = connection
    }

    func send(_ text: String) {
        let reactor = connection.reactor
        let bytes = Array((text + "\n").utf8)
        reactor.queue.sync { reactor.deliverForTesting(bytes, to: connection) }
    }

    /// Several lines in one read.
    func sendRaw(_ text: String) {
        let reactor = connection.reactor
        reactor.queue.sync { reactor.deliverForTesting(Array(text.utf8), to: connection) }
    }

    private func take() {
        pending += String(decoding: connection.sink?.take() ?? [], as: UTF8.self)
        var lines = pending.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        pending = lines.removeLast()
        unread += lines
    }

    /// The next line, once written.
    func readLine(seconds: Double = 10) throws -> String {
        _ = eventually(seconds: seconds) {
            take()
            return !unread.isEmpty
        }
        guard !unread.isEmpty else { throw Failure(description: "no line within \(seconds) s; read so far: \(received.suffix(10))") }
        let line = unread.removeFirst()
        received.append(line)
        return line
    }

    /// The first line starting with `prefix`, skipping others (at most 200).
    func expect(_ prefix: String, seconds: Double = 10) throws -> String {
        for _ in 0..<200 {
            let line = try readLine(seconds: seconds)
            if line.hasPrefix(prefix) { return line }
        }
        throw Failure(description: "no \(prefix) in 200 lines: \(received.suffix(20))")
    }

    /// Lines through the first that starts with `prefix` (at most `limit`).
    func readLines(through prefix: String, limit: Int = 200, seconds: Double = 10) throws -> [String] {
        var lines: [String] = []
        for _ in 0..<limit {
            let line = try readLine(seconds: seconds)
            lines.append(line)
            if line.hasPrefix(prefix) { return lines }
        }
        throw Failure(description: "no \(prefix) in \(limit) lines: \(lines.suffix(20))")
    }

    /// What was written and not read yet, without waiting: call `settle` first.
    func drain() -> [String] {
        take()
        defer { unread = [] }
        received += unread
        return unread
    }

    var isClosed: Bool {
        let reactor = connection.reactor
        return reactor.queue.sync {
            if case .closed = connection.machine.state { true } else { false }
        }
    }

    /// Waits for the connection to close (each write or log line looks again).
    func waitForClose(seconds: Double = 10) -> Bool { eventually(seconds: seconds) { isClosed } }
}
