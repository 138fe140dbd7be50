import ArbiterCluster
import ArbiterCore
import ArbiterTestSupport
import Foundation
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// A follower killed and started again at once numbers its sessions from where the dead
/// process did. The leader must not take the new sessions for the old ones.
@Suite("cluster mode: a node restarted at once", .serialized)
struct ClusterRestartTests {
    @Test func aRestartedNodesOldSessionsEndAsADisconnectAndItsNewOnesStartClean() throws {
        let nodes = try ClusterTestNodes(["n1", "n2"])
        let leader = try #require(nodes.leader())
        let follower = try #require(nodes.followers(of: leader).first)
        let (alice, _) = try nodes.member(leader, name: "alice")
        let bob = try nodes.client(follower, name: "bob")
        let bobsNumber = try #require(nodes.context(follower)?.setup.sessionBase).advanced(by: 1)
        bob.send("DOWN demo b1")
        _ = try bob.expect("GRANTED demo b1")
        _ = try alice.expect("PRESSED demo b1 owner=bob")
        let before = try #require(nodes.context(follower)?.setup.incarnation)

        try nodes.restartAtOnce(follower)
        #expect(nodes.context(follower)?.setup.incarnation != before)
        #expect(nodes.leader() == leader)
        // The new process's first session has the number bob had.
        let carol = try nodes.client(follower, name: "carol")
        let serving = try #require(nodes.servers[follower]?.stateForTesting)
        #expect(serving.registry.withLock { $0.keys.map(\.number) } == [bobsNumber])
        carol.send("DOWN demo b2")
        _ = try carol.expect("GRANTED demo b2")
        // bob's grant ended as a dead node's sessions' do, before carol's press.
        let seen = try alice.readLines(through: "PRESSED demo b2 owner=carol")
        #expect(seen.contains { $0.hasPrefix("RELEASED demo b1") && $0.contains("reason=disconnect owner=bob") }, "\(seen)")
        // carol's UP releases her own button, and only hers: b1 is free for anyone.
        carol.send("UP demo b2")
        _ = try carol.expect("OK UP demo b2")
        #expect(try alice.expect("RELEASED demo b2").contains("reason=up owner=carol"))
        let dave = try nodes.client(leader, name: "dave")
        dave.send("DOWN demo b1")
        _ = try dave.expect("GRANTED demo b1")
    }

    @Test func aReplyForAnotherRunOfThisNodeIsNotWritten() throws {
        let nodes = try ClusterTestNodes(["n1", "n2"])
        let leader = try #require(nodes.leader())
        let follower = try #require(nodes.followers(of: leader).first)
        let carol = try nodes.client(follower, name: "carol")
        let context = try #require(nodes.context(follower))
        let host = try #require(nodes.servers[follower]?.stateForTesting?.panelsByID["demo"])
        let term = try #require(host.queue.sync { host.clusterState.leader.term })
        // carol's number is the first of this node's range, as a dead run's first was.
        let number = UInt64(context.setup.sessionBase + 1)
        func reply(_ text: String, run: UInt64) -> RelayMessage {
            .reply(panel: "demo", term: term, session: number, line: RelayPayload.reply(.notice, rendered: Array("\(text)\n".utf8)), incarnation: run)
        }
        // carol waits for b2, as after a QUEUED answer: a hand-off for a place nobody
        // waits in is let go instead of written (`PanelHost.handOffExpected`).
        host.queue.sync {
            host.clusterState.following.waitingPlaces[SessionID(Int(number))] = [WaitingPlace(button: 1, position: 1, name: "carol", format: .text)]
        }
        // A queue's hand-off the leader sent to the dead run, then one for this run.
        context.receive(reply("GRANTED demo b1 fence=7", run: context.setup.incarnation &+ 1), from: leader)
        context.receive(reply("GRANTED demo b2 fence=8", run: context.setup.incarnation), from: leader)
        let lines = try carol.readLines(through: "GRANTED demo b2")
        #expect(!lines.contains { $0.hasPrefix("GRANTED demo b1") }, "\(lines)")
    }

    @Test func aFrameOfAReplacedRunIsDropped() {
        func run(_ incarnation: UInt64) -> RelayIncarnations.Run { .init(incarnation: incarnation, lease: 0) }
        var runs = RelayIncarnations()
        #expect(runs.admit(run(7), of: "n2") == .first)
        #expect(runs.admit(run(7), of: "n2") == .current)
        #expect(runs.admit(run(9), of: "n3") == .first)
        #expect(runs.admit(run(8), of: "n2") == .replaced(previous: run(7)))
        #expect(runs.admit(run(7), of: "n2") == .retired)
        #expect(runs.isRetired(run(7), of: "n2") && !runs.isRetired(run(8), of: "n2") && !runs.isRetired(run(9), of: "n3"))
        #expect(runs.admit(run(8), of: "n2") == .current)
        // Only the newest few are kept: a run long gone would count as a new one.
        for n in 100..<(100 + UInt64(RelayIncarnations.retiredKept)) { _ = runs.admit(run(n), of: "n2") }
        #expect(!runs.isRetired(run(7), of: "n2") && runs.isRetired(run(8), of: "n2"))
    }

    /// A node whose lease lapsed comes back in the same process under a new lease: a new
    /// run, whose arrival ends the old one's sessions; after that, the old lease's
    /// registration vanishing from etcd must not end the new run's.
    @Test func aNewLeaseInTheSameProcessIsANewRun() {
        var runs = RelayIncarnations()
        #expect(runs.admit(.init(incarnation: 7, lease: 0), of: "n2") == .first)
        #expect(runs.admit(.init(incarnation: 7, lease: 100), of: "n2") == .current, "a first lease completes a run begun without one")
        #expect(runs.isCurrent(lease: 100, of: "n2"))
        #expect(runs.admit(.init(incarnation: 7, lease: 0), of: "n2") == .current)
        #expect(runs.admit(.init(incarnation: 7, lease: 200), of: "n2") == .replaced(previous: .init(incarnation: 7, lease: 100)))
        #expect(runs.admit(.init(incarnation: 7, lease: 100), of: "n2") == .retired, "a frame of the lapsed lease, late")
        #expect(!runs.isCurrent(lease: 100, of: "n2"), "the old registration vanishing ends nothing more")
        #expect(runs.isCurrent(lease: 200, of: "n2"))
        #expect(runs.isCurrent(lease: 5, of: "n9"), "a node never heard from: its registration's end is its sessions' end")
        // A restart retires every lease of the old process.
        #expect(runs.admit(.init(incarnation: 8, lease: 300), of: "n2") == .replaced(previous: .init(incarnation: 7, lease: 200)))
        #expect(runs.isRetired(.init(incarnation: 7, lease: 200), of: "n2") && runs.isRetired(.init(incarnation: 7, lease: 999), of: "n2"))
    }
}
