import ArbiterCore
import ArbiterIO
@testable import ArbiterServer
import ArbiterTestSupport

/// A server with no listener and no sockets, on a manual clock: connections are fed
/// bytes by hand and their output is read back, and time moves only by `advance`
/// (the idea of swift-nio's `NIOEmbedded`). The reactor and panels still run on their
/// own queues, entered with `sync`, exactly as in production.
final class EmbeddedServer: @unchecked Sendable {
    let clock = ManualClock()
    let state: ServerState
    /// What the server logged (`LogCapture`), instead of standard error.
    let log = LogCapture()
    private var nextPort = 40_000

    init(panels: [PanelConfig] = [.demo], configure: (inout ServerConfiguration) -> Void = { _ in }) throws {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.panels = panels
        configuration.logLevel = .warning
        configuration.logSink = log.sink()
        configuration.reactorCount = 1
        configure(&configuration)
        state = try ServerState(configuration: configuration, clock: clock)
        try state.makeReactors()
        for reactor in state.reactors { reactor.markQueue() }
    }

    deinit {
        for reactor in state.reactors { reactor.queue.sync { reactor.stop() } }
        for panel in state.panels { panel.queue.sync { panel.stop() } }
    }

    /// A peer that has connected and said nothing yet.
    func connect(from address: String = "127.0.0.1") -> EmbeddedConnection {
        nextPort += 1
        let connection = state.adopt(fd: -1, peer: "\(address):\(nextPort)", sink: EmbeddedSink())
        let reactor = connection.reactor
        reactor.queue.sync {}  // its registration
        return EmbeddedConnection(connection)
    }

    /// Moves the clock, then runs what would have fired by then: the WELCOME deadline,
    /// the reactor's sweep (head, idle and ping timeouts) and the panels' timers.
    func advance(milliseconds: Int64) {
        clock.advance(milliseconds: milliseconds)
        for reactor in state.reactors { reactor.queue.sync { reactor.tickForTesting() } }
        for panel in state.panels { panel.queue.sync { panel.timerFired() } }
        // Releases a panel timer caused are written by the reactor's flush of the panel's
        // output, already done inside `timerFired`.
    }
}

/// One connection of an `EmbeddedServer`.
final class EmbeddedConnection: @unchecked Sendable {
    let connection: Connection
    private var pending = ""

    init(_ connection: Connection) {
        self.connection = connection
    }

    /// Bytes from the peer, read in one go.
    func send(_ text: String) { send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) {
        let reactor = connection.reactor
        reactor.queue.sync { reactor.deliverForTesting(bytes, to: connection) }
    }

    /// Bytes read now that the kernel stamped `microseconds` earlier (a socket another
    /// reactor got to late).
    func send(_ text: String, arrivedMicrosecondsAgo microseconds: Int64) {
        let reactor = connection.reactor
        reactor.queue.sync { reactor.deliverForTesting(Array(text.utf8), to: connection, arrivedNanosAgo: microseconds * 1000) }
    }

    /// Everything written to the peer since the last read.
    func output() -> [UInt8] { connection.sink?.take() ?? [] }

    /// The complete lines written since the last read.
    func lines() -> [String] {
        pending += String(decoding: output(), as: UTF8.self)
        var lines = pending.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        pending = lines.removeLast()
        return lines
    }

    /// Whether the server closed the connection.
    var isClosed: Bool {
        let reactor = connection.reactor
        return reactor.queue.sync {
            if case .closed = connection.machine.state { true } else { false }
        }
    }
}
