import ArbiterCluster
import Glibc
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// A cluster panel's state belongs to its panel's queue, checked in release builds too
/// where work enters it from another thread (`ClusterPanelPart.assertOnQueue`). A trap is
/// SIGILL; a thrown error (a broken set-up) would be an exit status instead.
@Suite("cluster mode: queue ownership checks")
struct ClusterQueueCheckTests {
    @Test func aRuntimeCallbackOffThePanelsQueueTraps() async {
        await #expect(processExitsWith: .signal(SIGILL)) {
            let nodes = try ClusterTestNodes(["n1"])
            let host = try #require(nodes.servers["n1"]?.stateForTesting?.panelsByID["demo"])
            // Not inside `host.queue`: as a runtime callback run on the runtime's own queue.
            host.clusterPanel.failover.checkAnswers()
        }
    }

    @Test func theSameCallOnItsQueuePasses() throws {
        let nodes = try ClusterTestNodes(["n1"])
        let host = try #require(nodes.servers["n1"]?.stateForTesting?.panelsByID["demo"])
        host.queue.sync { host.clusterPanel.failover.checkAnswers() }
    }
}
