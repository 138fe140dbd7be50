import ArbiterCluster
import ArbiterClusterTestSupport
import ArbiterCore
import ArbiterIO
import ArbiterTestSupport
import Foundation
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// A leader tells following nodes what to track of each event as fields (`typedEvent`),
/// and a node of an earlier version, which did not announce `typed-events`, the rendered
/// lines alone (`event`), which it reads as before: members on both see the same lines.
@Suite("cluster mode: typed event frames", .serialized)
struct ClusterTypedEventTests {
    /// Sends a press on the leader and returns what a member on the follower read, with
    /// the event frames the hub carried of each kind.
    private static func pressSeenOnFollower(features: [String: Set<String>]) throws -> (lines: [String], typed: Int, legacy: Int) {
        let nodes = try ClusterTestNodes(["n1", "n2"], features: features)
        let (leader, follower) = try nodes.leaderAndFollower()
        // The leader reads what each node announced with the registrations (every 500 ms):
        // until then it sends everyone `event`, which every version reads.
        let host = try #require(nodes.servers[leader]?.stateForTesting?.panelsByID["demo"])
        let announced = features[follower].map { $0.contains(ClusterFeatures.typedEvents) } ?? true
        try #require(eventually(seconds: 5) { host.queue.sync { host.clusterState.typedEventNodes.contains(follower) } == announced })
        let counts = Locked((typed: 0, legacy: 0))
        nodes.hub.observeSends { message in
            switch message {
            case .typedEvent: counts.withLock { $0.typed += 1 }
            case .event: counts.withLock { $0.legacy += 1 }
            case .command, .reply, .sessionGone, .ping, .stateQuery, .stateAnswer, .kick, .kickAnswer, .grantEnded: break
            }
        }
        let (watcher, _) = try nodes.member(follower, name: "watcher")
        let bob = try nodes.client(leader, name: "bob")
        bob.send("DOWN demo b1")
        _ = try bob.expect("GRANTED demo b1")
        bob.send("UP demo b1")
        _ = try bob.expect("OK UP demo b1")
        let lines = [try watcher.expect("PRESSED demo b1"), try watcher.expect("RELEASED demo b1")]
        let seen = counts.withLock { $0 }
        return (lines, seen.typed, seen.legacy)
    }

    @Test func aFollowerOfThisVersionGetsTypedEvents() throws {
        let seen = try Self.pressSeenOnFollower(features: [:])
        #expect(seen.lines[0].contains("owner=bob"))
        #expect(seen.lines[1].contains("reason=up"))
        #expect(seen.typed >= 2)
        #expect(seen.legacy == 0)
    }

    @Test func aFollowerOfAnEarlierVersionGetsRenderedEventsAlone() throws {
        let earlier = ClusterFeatures.all.subtracting([ClusterFeatures.typedEvents])
        let seen = try Self.pressSeenOnFollower(features: ["n1": earlier, "n2": earlier])
        #expect(seen.lines[0].contains("owner=bob"))
        #expect(seen.lines[1].contains("reason=up"))
        #expect(seen.legacy >= 2)
        #expect(seen.typed == 0)
    }
}
