import ArbiterCore
import ArbiterIO
import Dispatch
import Glibc
import Synchronization

/// The button arbitration server: one port for line, HTTP and WebSocket peers, each
/// panel's arbiter on its own serial queue.
public final class ArbiterServer: Sendable {
    public let configuration: ServerConfiguration
    /// The clock the server decides by: the system's unless a test passes a manual one.
    public let clock: any TimeSource
    private let running = Locked<ServerState?>(nil)
    private let boundPort = Atomic<Int>(0)

    public init(configuration: ServerConfiguration, clock: any TimeSource = SystemClock.monotonic) {
        self.configuration = configuration
        self.clock = clock
    }

    /// Opens the journal and the listener and starts serving. Returns the port actually
    /// bound (useful with port 0).
    @discardableResult
    public func start() throws -> UInt16 {
        let state = try ServerState(configuration: configuration, clock: clock)
        if let cluster = state.cluster {
            // Before listening: a node whose config differs never serves a client.
            do {
                try cluster.prepare(panels: configuration.panels, journalFences: state.journalFences)
            } catch {
                state.journal?.close()
                cluster.stopRelay()
                throw error
            }
        }
        // Listening and the advertise check come before the reactors and the panels' timers
        // start, so a refused start (or a port in use) leaves nothing running behind it.
        let listener: (fd: Int32, port: UInt16)
        var acceptedEarly: [(fd: Int32, peer: String)] = []
        do {
            listener = try Sys.listen(host: configuration.host, port: configuration.port, backlog: Int32(configuration.listenBacklog ?? Sys.systemMaxBacklog()))
            if let cluster = state.cluster { acceptedEarly = try cluster.checkReachable(listener: listener, host: configuration.host) }
        } catch {
            state.journal?.close()
            state.cluster?.stopRelay()
            throw error
        }
        do {
            try state.makeReactors()
        } catch {
            for connection in acceptedEarly { Sys.close(connection.fd) }
            Sys.close(listener.fd)
            state.journal?.close()
            state.cluster?.stopRelay()
            throw error
        }
        // Leadership may start before the first client: the panels' queues exist now, and
        // the reactors that serve clients start below.
        state.cluster?.start()
        state.hooks?.start()
        for reactor in state.reactors { reactor.start() }
        let first = state.reactors[0]
        first.queue.sync {
            for connection in acceptedEarly { state.adopt(fd: connection.fd, peer: connection.peer) }
            first.watchListener(listener.fd)
        }
        running.withLock { $0 = state }
        boundPort.store(Int(listener.port), ordering: .relaxed)
        state.log.info(
            "listening",
            [
                "host": configuration.host, "port": "\(listener.port)",
                "panels": configuration.panels.map(\.id).joined(separator: ","),
            ])
        return listener.port
    }

    public var port: UInt16 { UInt16(boundPort.load(ordering: .relaxed)) }

    /// The running state, for lifecycle tests.
    var stateForTesting: ServerState? { running.withLock { $0 } }

    /// The graceful stop of SIGTERM/SIGINT: stop accepting, release every button with
    /// `reason=shutdown` (members see it), say goodbye (`OK BYE reason=shutdown` to line
    /// peers, close 1001 to WebSockets), wait up to `shutdownGraceMs` for that to be
    /// written, then close everything and sync the journal.
    public func shutdown() {
        guard let state = take() else { return }
        state.beginShutdown()
        state.reactors[0].queue.sync { state.reactors[0].stopListening() }
        // Hands every panel over at once; members here see reason=failover.
        state.cluster?.stop(resign: true)
        for panel in state.panels { panel.queue.sync { panel.releaseAllForShutdown() } }
        for reactor in state.reactors { reactor.queue.sync { reactor.sayGoodbye() } }
        let deadline = SystemClock.monotonic.milliseconds() + state.configuration.shutdownGraceMs
        while SystemClock.monotonic.milliseconds() < deadline {
            let open = state.reactors.reduce(0) { sum, r in sum + r.queue.sync { r.connectionCount } }
            if open == 0 { break }
            usleep(5000)
        }
        finish(state)
        state.log.info("shut down")
    }

    /// Stops at once: every connection is closed (what they owned is released with
    /// `reason=disconnect`).
    public func stop() {
        guard let state = take() else { return }
        state.beginShutdown()
        state.reactors[0].queue.sync { state.reactors[0].stopListening() }
        // As a crash would: the others take over when the lease expires.
        state.cluster?.stop(resign: false)
        finish(state)
        state.log.info("stopped")
    }

    private func take() -> ServerState? {
        running.withLock { s -> ServerState? in
            defer { s = nil }
            return s
        }
    }

    private func finish(_ state: ServerState) {
        for reactor in state.reactors { reactor.queue.sync { reactor.stop() } }
        // Let the releases those closes started run to the end before the panels stop.
        for panel in state.panels { panel.queue.sync {} }
        for panel in state.panels { panel.queue.sync { panel.stop() } }
        state.hooks?.stop()
        state.cluster?.stopRelay()
        state.journal?.close()
    }
}
