import ArbiterCore
import Dispatch
import Synchronization

/// The button arbitration server: one port, line peers (and, later, HTTP and
/// WebSocket peers), each panel's arbiter on its own serial queue.
public final class ArbiterServer: Sendable {
    public let configuration: ServerConfiguration
    private let running = Mutex<ServerState?>(nil)
    private let boundPort = Atomic<Int>(0)

    public init(configuration: ServerConfiguration) {
        self.configuration = configuration
    }

    /// Opens the listener and starts serving. Returns the port actually bound (useful
    /// with port 0).
    @discardableResult
    public func start() throws -> UInt16 {
        let state = ServerState(configuration: configuration)
        try state.makeReactors()
        let listener = try Sys.listen(host: configuration.host, port: configuration.port, backlog: 1024)
        for reactor in state.reactors { reactor.start() }
        let first = state.reactors[0]
        first.queue.sync { first.watchListener(listener.fd) }
        running.withLock { $0 = state }
        boundPort.store(Int(listener.port), ordering: .relaxed)
        state.log.info("listening", ["host": configuration.host, "port": "\(listener.port)",
                                     "panels": configuration.panels.map(\.id).joined(separator: ",")])
        return listener.port
    }

    public var port: UInt16 { UInt16(boundPort.load(ordering: .relaxed)) }

    /// Stops listening and closes every connection (what they owned is released).
    public func stop() {
        guard let state = running.withLock({ s -> ServerState? in
            defer { s = nil }
            return s
        }) else { return }
        for reactor in state.reactors { reactor.queue.sync { reactor.stop() } }
        // Let the releases the closes started run to the end before the panels stop.
        for panel in state.panels { panel.queue.sync {} }
        for panel in state.panels { panel.queue.sync { panel.stop() } }
        state.log.info("stopped")
    }
}
