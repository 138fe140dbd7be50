import ArbiterTestSupport
import Foundation
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// A reply slot whose answer some path lost would hold every later reply of its
/// connection for ever; the reactor's sweep answers it `ERROR unavailable` once it is
/// owed past `ClusterSetup.owedReplyLimitMs`, and what waited behind it follows.
@Suite struct ClusterOwedReplyTests {
    @Test func aReplyOwedPastTheLimitIsAnsweredAndWhatWaitedFollows() throws {
        // Short waits, so the limit is 5.3 s.
        let nodes = try ClusterTestNodes(["n1", "n2"], answerTimeoutMs: 300, joinWaitMs: 300)
        let (_, follower) = try nodes.leaderAndFollower()
        let bob = try nodes.client(follower, name: "bob")
        let state = try #require(nodes.servers[follower]?.stateForTesting)
        let connection = try #require(state.registry.withLock { $0.values.first { $0.name == "bob" } })
        // The lost path: a slot nothing will ever answer.
        _ = connection.reserveReplySlot()
        bob.send("PING a")
        #expect(bob.drain(for: 1).isEmpty, "the PONG went out before the slot owed ahead of it")
        let given = try bob.readLine(timeout: 10)
        #expect(given.hasPrefix("ERROR unavailable") && given.contains("may or may not have been done"), "\(given)")
        #expect(try bob.readLine(timeout: 2) == "PONG a")
        bob.send("PING b")
        #expect(try bob.readLine(timeout: 2) == "PONG b")
    }
}
