@testable import ArbiterServer
import Glibc
import Testing

/// Methods that belong to a queue trap when called from elsewhere (debug builds only:
/// the check is compiled out of release builds). A trap is SIGILL here; a thrown error
/// (a broken set-up) would be an exit status instead, and fail the test.
@Suite("queue ownership checks")
struct QueueCheckTests {
    #if DEBUG
        @Test func aReactorMethodOffItsQueueTraps() async {
            await #expect(processExitsWith: .signal(SIGILL)) {
                let server = try EmbeddedServer()
                let c = server.connect()
                // Not inside `reactor.queue.sync`.
                c.connection.reactor.close(c.connection, reason: "from the wrong thread")
            }
        }

        @Test func aPanelMethodOffItsQueueTraps() async {
            await #expect(processExitsWith: .signal(SIGILL)) {
                let server = try EmbeddedServer()
                server.state.panels[0].timerFired()
            }
        }

        @Test func aConnectionsLifeCycleReadOffItsReactorQueueTraps() async {
            await #expect(processExitsWith: .signal(SIGILL)) {
                let server = try EmbeddedServer()
                let c = server.connect()
                _ = c.connection.machine.runsCommands
            }
        }

        @Test func theSameCallsOnTheirQueuesPass() throws {
            let server = try EmbeddedServer()
            let c = server.connect()
            let reactor = c.connection.reactor
            reactor.queue.sync { reactor.close(c.connection, reason: "on its queue") }
            #expect(c.isClosed)
            #expect(reactor.queue.sync { !c.connection.machine.runsCommands })
            let panel = server.state.panels[0]
            panel.queue.sync { panel.timerFired() }
        }
    #endif
}
