import ArbiterClusterTestSupport
import ArbiterCore
import ArbiterIO
import ArbiterTestSupport
import Dispatch
import Foundation
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// A buzzer ranks presses by when their bytes were read (PROTOCOL-NOTES, "Times"). A press
/// relayed from another node arrives when the leader's node reads its frame: before, it
/// was timed when the panel's queue let it in, so a busy panel ranked a relayed press by
/// its wait there as well.
@Suite("cluster mode: buzzer rounds across nodes", .serialized)
struct ClusterBuzzerTests {
    @Test(arguments: [false, true])
    func aRelayedPressIsRankedByItsArrivalNotByItsWaitForThePanel(sockets: Bool) throws {
        // The panels' clock, moved by hand: the time the relayed DOWN waits for the panel
        // passes on it without the test sleeping.
        let clock = ManualClock(nanoseconds: SystemClock.monotonic.nanoseconds())
        let nodes = try ClusterTestNodes(["n1", "n2"], panels: [Panels.fair], sockets: sockets, clock: clock)
        let (leader, follower) = try nodes.leaderAndFollower(of: "f")
        let host = try nodes.client(leader, name: "host")
        host.send("ARM f quiz")
        _ = try host.expect("OK ARM f quiz")
        let blue = try nodes.client(leader, name: "blue")
        blue.send("DOWN f blue")
        _ = try blue.expect("GRANTED f blue")
        let red = try nodes.client(follower, name: "red")

        let panel = try #require(nodes.servers[leader]?.stateForTesting?.panelsByID["f"])
        let context = try #require(nodes.context(leader))
        let relayed = context.relayedIn.load(ordering: .relaxed)
        // The leader's panel is busy for 300 ms (on its clock) from before the relayed DOWN
        // is read.
        let busy = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        panel.queue.async {
            busy.signal()
            _ = done.wait(timeout: .now() + 10)
        }
        busy.wait()
        red.send("DOWN f red")
        let read = eventually(seconds: 5) { context.relayedIn.load(ordering: .relaxed) > relayed }
        clock.advance(milliseconds: 300)
        done.signal()
        #expect(read, "the leader's node never read the relayed DOWN")

        let ranked = try red.expect("RANKED")
        #expect(ranked.hasPrefix("RANKED f red rank=2 after_us="))
        let after = try #require(ranked.split(separator: " ").first { $0.hasPrefix("after_us=") }.flatMap { Int($0.dropFirst("after_us=".count)) })
        // Read within a few ms of blue's grant; the 300 ms in the queue do not count.
        #expect(after < 250_000, "ranked \(after) us after the winner: timed by the wait for the panel's queue")
    }

    /// A full hall across nodes: the leader announces the first `announce` places, every
    /// node passes on only those, and `RANKING` through a follower reads the whole table.
    @Test func onlyAnnouncedPlacesReachMembersAndRankingWorksThroughAnyNode() throws {
        var panel = Panels.fair
        panel.groups["quiz"] = .buzzer(earlyLockoutMs: 200, announce: 1)
        let nodes = try ClusterTestNodes(["n1", "n2"], panels: [panel], sockets: false)
        let (leader, follower) = try nodes.leaderAndFollower(of: "f")
        let (watcher, _) = try nodes.member(follower, name: "watch", panel: "f")
        let host = try nodes.client(leader, name: "host")
        host.send("ARM f quiz")
        _ = try host.expect("OK ARM f quiz")
        let blue = try nodes.client(leader, name: "blue")
        blue.send("DOWN f blue")
        _ = try blue.expect("GRANTED f blue")
        let red = try nodes.client(follower, name: "red")
        red.send("DOWN f red")
        #expect(try red.expect("RANKED").hasPrefix("RANKED f red rank=2 after_us="))
        // An event after the unannounced press: everything before it has been passed on.
        host.send("RESET f")
        let seen = try watcher.readLines(through: "CLOSED f quiz")
        #expect(seen.contains { $0.hasPrefix("FIRED f blue") })
        #expect(!seen.contains { $0.hasPrefix("BUZZED") }, "rank 2 was announced: \(seen)")
        let reader = try nodes.client(follower, name: "reader")
        reader.send("RANKING f quiz")
        let table = try reader.readLines(through: "OK RANKING")
        #expect(table.first == "ROUND f quiz state=closed")
        #expect(table.dropFirst().first?.hasPrefix("RANK f blue name=blue session=") == true)
        #expect(table.dropFirst(2).first?.hasPrefix("RANK f red name=red session=") == true)
        #expect(table.last == "OK RANKING f quiz ranked=2")
    }

    /// A relayed press waits for its decision window at the leader, which answers it then
    /// through the relay, in its place: the UP its session sent behind it comes after.
    @Test func aRelayedPressIsAnsweredAfterItsWindowAndWhatFollowsItWaits() throws {
        var panel = Panels.fair
        panel.groups["quiz"] = .buzzer(earlyLockoutMs: 200, decisionWindowUs: 2000)
        let nodes = try ClusterTestNodes(["n1", "n2"], panels: [panel], sockets: false)
        let (leader, follower) = try nodes.leaderAndFollower(of: "f")
        let host = try nodes.client(leader, name: "host")
        host.send("ARM f quiz")
        _ = try host.expect("OK ARM f quiz")
        let red = try nodes.client(follower, name: "red")
        red.sendRaw(Array("DOWN f red\nUP f red\n".utf8))
        #expect(try red.readLine().hasPrefix("GRANTED f red fence="))
        #expect(try red.readLine() == "OK UP f red")
        let blue = try nodes.client(leader, name: "blue")
        blue.send("DOWN f blue")
        #expect(try blue.readLine().hasPrefix("RANKED f blue rank=2 after_us="))
    }
}
