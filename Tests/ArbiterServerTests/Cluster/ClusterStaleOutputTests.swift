import ArbiterTestSupport
import Dispatch
import Foundation
import Synchronization
import Testing

@testable import ArbiterServer

/// A leader's decision and the write that tells it are two steps: a process paused
/// between them (SIGSTOP, a VM freeze) past its lease wakes with the GRANTED still to
/// write, while another node may lead and have granted the group again at a higher fence
/// (`bench/nemesis.py`, seed 21). What a lapsed lease made stale is dropped at the write,
/// and the connection closes, so its client reconnects to the truth.
@Suite(.serialized)
struct ClusterStaleOutputTests {
    @Test func aDecisionWrittenAfterTheLeaseLapsedIsDroppedAndItsConnectionsClose() throws {
        let nodes = try ClusterTestNodes(["n1", "n2"])
        let (leader, _) = try nodes.leaderAndFollower()
        let (alice, _) = try nodes.member(leader, name: "alice")
        let bob = try nodes.client(leader, name: "bob")
        let state = try #require(nodes.servers[leader]?.stateForTesting)
        let context = try #require(nodes.context(leader))
        let aliceConnection = try #require(state.registry.withLock { $0.values.first { $0.name == "alice" } })

        // The stall: alice's connection lock is held, so the reactor deciding bob's DOWN
        // waits at her PRESSED, after the decision and before any write.
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            aliceConnection.withLock {
                holding.signal()
                _ = release.wait(timeout: .now() + 20)
            }
        }
        holding.wait()
        bob.send("DOWN demo b1")
        usleep(200_000)
        // Meanwhile the lease runs out: keepalives fail, and past TTL minus the margin
        // the node may no longer count on it.
        nodes.leaseViews[leader]?.setFailing(true)
        let lapsed = eventually(seconds: 5) { context.runtime.writableLeaseID() == nil }
        release.signal()
        #expect(lapsed, "the lease never became unsafe")

        let aliceHeard = alice.drain(for: 1.5)
        let bobHeard = bob.drain(for: 0.5)
        #expect(!aliceHeard.contains { $0.hasPrefix("PRESSED demo b1") }, "a stale decision reached a member: \(aliceHeard)")
        #expect(!bobHeard.contains { $0.hasPrefix("GRANTED demo b1") }, "a stale GRANTED reached its requester: \(bobHeard)")
        #expect(alice.waitForClose(timeout: 3), "alice's connection stays open with a dropped decision")
        #expect(bob.waitForClose(timeout: 3), "bob's connection stays open with a dropped GRANTED")
    }

    /// The same on a follower: a leader's event heard while the lease held, then written
    /// after it lapsed, is dropped too.
    @Test func aRelayedEventWrittenAfterTheFollowersLeaseLapsedIsDropped() throws {
        let nodes = try ClusterTestNodes(["n1", "n2"])
        let (leader, follower) = try nodes.leaderAndFollower()
        let (carol, _) = try nodes.member(follower, name: "carol")
        let bob = try nodes.client(leader, name: "bob")
        let state = try #require(nodes.servers[follower]?.stateForTesting)
        let context = try #require(nodes.context(follower))
        let carolConnection = try #require(state.registry.withLock { $0.values.first { $0.name == "carol" } })
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            carolConnection.withLock {
                holding.signal()
                _ = release.wait(timeout: .now() + 20)
            }
        }
        holding.wait()
        bob.send("DOWN demo b1")
        _ = try bob.expect("GRANTED demo b1")
        usleep(200_000)
        nodes.leaseViews[follower]?.setFailing(true)
        let lapsed = eventually(seconds: 5) { context.runtime.writableLeaseID() == nil }
        release.signal()
        #expect(lapsed, "the lease never became unsafe")
        let heard = carol.drain(for: 1.5)
        #expect(!heard.contains { $0.hasPrefix("PRESSED demo b1") }, "a stale event reached a follower's member: \(heard)")
        #expect(carol.waitForClose(timeout: 3), "carol's connection stays open with a dropped event")
    }

    /// Without a lapse the same stall changes nothing: the lease held throughout, so no
    /// other node can have decided meanwhile, and the decision is written late but true.
    @Test func aStallWithinTheLeaseWritesTheDecision() throws {
        let nodes = try ClusterTestNodes(["n1", "n2"])
        let (leader, _) = try nodes.leaderAndFollower()
        let (alice, _) = try nodes.member(leader, name: "alice")
        let bob = try nodes.client(leader, name: "bob")
        let state = try #require(nodes.servers[leader]?.stateForTesting)
        let aliceConnection = try #require(state.registry.withLock { $0.values.first { $0.name == "alice" } })
        let holding = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            aliceConnection.withLock {
                holding.signal()
                usleep(300_000)
            }
        }
        holding.wait()
        bob.send("DOWN demo b1")
        _ = try alice.expect("PRESSED demo b1 owner=bob")
        _ = try bob.expect("GRANTED demo b1")
    }
}
