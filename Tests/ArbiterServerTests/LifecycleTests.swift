import ArbiterTestSupport
import Foundation
import Testing
@testable import ArbiterServer

@Suite("server lifecycle")
struct LifecycleTests {
    func quietServer() -> ArbiterServer {
        var c = ServerConfiguration()
        c.port = 0
        c.logLevel = .off
        return ArbiterServer(configuration: c)
    }

    /// A stopped server leaves nothing behind: its state, reactors, panels and
    /// connections are all freed (no reference cycle survives `stop`).
    @Test func stopFreesEverything() throws {
        weak var state: ServerState?
        weak var reactor: Reactor?
        weak var panel: PanelHost?
        weak var connection: Connection?
        var queues: [DispatchQueue] = []
        do {
            let server = quietServer()
            let port = try server.start()
            let client = try LineClient(port: port)
            client.send("HELLO a\nJOIN demo\nDOWN demo b1")
            _ = try client.expect("GRANTED")
            state = server.stateForTesting
            reactor = state?.reactors.first
            panel = state?.panels.first
            connection = state?.registry.withLock { $0.values.first }
            queues = (state?.reactors.map(\.queue) ?? []) + (state?.panels.map(\.queue) ?? [])
            server.stop()
        }
        // The last references go with the blocks still queued on the server's queues: the
        // wait is for those queues to drain, each round behind what the one before queued.
        for _ in 0..<5 where state != nil || reactor != nil || panel != nil || connection != nil {
            for queue in queues { queue.sync {} }
        }
        // Booleans, not the objects: reflecting a half-torn-down object would crash.
        let alive = (connection: connection != nil, panel: panel != nil, reactor: reactor != nil, state: state != nil)
        #expect(!alive.connection, "connection leaked")
        #expect(!alive.panel, "panel leaked")
        #expect(!alive.reactor, "reactor leaked")
        #expect(!alive.state, "server state leaked")
    }

    /// If the epoll descriptor's wake-up never comes, the once-a-second sweep still
    /// serves what is ready (and counts it), instead of leaving peers waiting.
    @Test func theSweepServesSocketsAMissedWakeupLeft() throws {
        let server = quietServer()
        let port = try server.start()
        defer { server.stop() }
        let reactor = try #require(server.stateForTesting?.reactors.first)
        reactor.queue.sync { reactor.suspendSourceForTesting(true) }
        defer { reactor.queue.sync { reactor.suspendSourceForTesting(false) } }
        let client = try LineClient(port: port)
        client.send("PING stranded")
        #expect(try client.expect("PONG") == "PONG stranded")
        let missed = server.stateForTesting?.metrics.missedWakeups.load(ordering: .relaxed) ?? 0
        #expect(missed >= 1)
    }
}
