import ArbiterCluster
import ArbiterClusterRuntime
@testable import ArbiterClusterServer
@testable import ArbiterServer
import ArbiterClusterTestSupport
import ArbiterTestSupport
import Testing

/// A relay link whose peer is cut off without a FIN or a reset (a lost route, a frozen
/// machine) must be noticed by the link itself: TCP alone would wait for minutes while
/// relayed commands go unanswered. Each end pings a quiet link and closes one it has heard
/// nothing on for `silenceTimeoutMs`.
@Suite("relay liveness")
struct RelayLivenessTests {
    static var quick: RelayOptions {
        var options = RelayOptions()
        options.pingIntervalMs = 50
        options.silenceTimeoutMs = 400
        return options
    }

    @Test func aLinkThatHearsNothingIsPingedThenClosedAsSilent() throws {
        let b = try RelayTestNode("n2", options: Self.quick)
        let silent = try #require(try RelayRawClient.linked(to: b, as: "n1"))
        #expect(eventually { b.seen.withLock { $0.ups } == ["n1"] })
        // It says nothing back, pings included.
        let (frames, closed) = try silent.frames(for: 5)
        #expect(closed, "the link was not closed after its peer fell silent")
        #expect(frames.count >= 2, "a quiet link sends pings: \(frames)")
        #expect(frames.allSatisfy { $0 == .ping })
        #expect(eventually { b.seen.withLock { $0.downs } == ["n1"] })
        #expect(eventually { !b.logLines(containing: "relay link down").isEmpty })
        #expect(b.logLines(containing: "relay link down").first?.contains("nothing heard for 400 ms") == true)
        #expect(b.received.isEmpty, "pings are not messages")
    }

    @Test func pingsKeepAQuietLinkUpAndAreNeverDelivered() throws {
        let a = try RelayTestNode("n1", options: Self.quick)
        let b = try RelayTestNode("n2", options: Self.quick)
        a.send(.sessionGone(origin: "n1", session: 1), to: b)
        #expect(eventually { b.received.count == 1 })
        // Three silence timeouts with nothing to say: the pings keep the link.
        #expect(!eventually(seconds: 1.2) { !a.seen.withLock { $0.downs }.isEmpty || !b.seen.withLock { $0.downs }.isEmpty })
        a.send(.sessionGone(origin: "n1", session: 2), to: b)
        #expect(eventually { b.received.count == 2 })
        #expect(a.seen.withLock { $0.downs }.isEmpty && b.seen.withLock { $0.downs }.isEmpty)
        #expect(a.network.linkCount == 1 && b.network.linkCount == 1)
        #expect(b.received == [.sessionGone(origin: "n1", session: 1), .sessionGone(origin: "n1", session: 2)])
        #expect(a.network.statistics.framesOut == 2, "pings are not counted as frames")
    }

    /// What the link does when it closes for silence is what it does for any drop: the
    /// sender's queued frames are reported undelivered (the server answers them
    /// `ERROR unavailable`) and the next frame dials again.
    @Test func aSilentPeersLinkIsDialledAgainForTheNextFrame() throws {
        let b = try RelayTestNode("n2", options: Self.quick)
        let silent = try #require(try RelayRawClient.linked(to: b, as: "n1"))
        #expect(silent.waitForClose())
        #expect(eventually { b.seen.withLock { $0.downs } == ["n1"] })
        let a = try RelayTestNode("n1", options: Self.quick)
        a.send(.sessionGone(origin: "n1", session: 3), to: b)
        #expect(eventually { b.received == [.sessionGone(origin: "n1", session: 3)] })
    }
}
