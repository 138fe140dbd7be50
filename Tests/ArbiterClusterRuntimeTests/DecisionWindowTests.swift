import ArbiterCluster
import ArbiterClusterRuntime
import ArbiterCore
import ArbiterIO
import Foundation
import Testing
import ArbiterClusterTestSupport

/// The window a panel keeps instead of asking `canDecide` before every decision: it must
/// close the moment anything `canDecide` depends on changes, not only at the deadline.
/// A long lease (TTL 10 s) keeps the deadline far away, so what closes the window here is
/// the change, never the clock.
@Suite(.serialized) struct DecisionWindowTests {
    let timing = ClusterTiming(ttlSeconds: 10, keepAliveIntervalMilliseconds: 2_000, safetyMarginMilliseconds: 500)

    func runtime(_ shared: SharedEtcd, lease: SharedEtcd.View? = nil, recorder: Recorder) -> ClusterRuntime {
        ClusterRuntime(
            name: "n1", advertise: "127.0.0.1:17001", panels: ["demo"], control: shared.view(), lease: lease ?? shared.view(),
            timing: timing, stepIntervalMilliseconds: 50, clock: SystemClock.boot, callbacks: recorder.callbacks)
    }

    @Test func aWindowGivesCanDecidesAnswerAndClosesWhenTheBlockGrows() throws {
        let shared = SharedEtcd()
        let node = runtime(shared, recorder: Recorder())
        node.start()
        defer { node.stop(resign: true) }
        #expect(eventually(seconds: 5) { node.decisionWindow("demo") != nil })
        let window = try #require(node.decisionWindow("demo"))
        #expect(window.block == node.canDecide("demo"))
        #expect(window.safeUntil > Instant(milliseconds: SystemClock.boot.milliseconds()))
        node.reserveMoreFences("demo")
        #expect(eventually(seconds: 5) { node.canDecide("demo")?.last == 2000 })
        #expect(!node.stillDecides(window), "the block changed, so the window must close")
        let next = try #require(node.decisionWindow("demo"))
        #expect(next.block.last == 2000)
        #expect(node.stillDecides(next))
    }

    @Test func aWindowClosesAtOnceWhenThePanelIsGivenUp() throws {
        let shared = SharedEtcd()
        let node = runtime(shared, recorder: Recorder())
        node.start()
        #expect(eventually(seconds: 5) { node.decisionWindow("demo") != nil })
        let window = try #require(node.decisionWindow("demo"))
        #expect(node.stillDecides(window))
        node.stop(resign: true)
        #expect(node.canDecide("demo") == nil)
        #expect(Instant(milliseconds: SystemClock.boot.milliseconds()) < window.safeUntil, "the deadline is seconds away: only the change can close the window")
        #expect(!node.stillDecides(window))
    }

    @Test func aWindowClosesWhenTheLeaseChanges() throws {
        let shared = SharedEtcd()
        let lease = shared.view()
        let node = runtime(shared, lease: lease, recorder: Recorder())
        node.start()
        defer { lease.setFailing(false); node.stop(resign: true) }
        #expect(eventually(seconds: 5) { node.decisionWindow("demo") != nil })
        let window = try #require(node.decisionWindow("demo"))
        // The next keepalive (every 2 s) fails: the lease's state changes, the table not yet.
        lease.setFailing(true)
        let before = node.statistics.keepAlivesFailed
        #expect(eventually(seconds: 6) { node.statistics.keepAlivesFailed > before })
        #expect(!node.stillDecides(window))
    }
}

/// The rule itself, on a manual clock: the deadline is exclusive, like `isSafe(at:)`.
@Suite struct DecisionWindowRuleTests {
    let window = DecisionWindow(block: FenceBlock(term: 7, first: 1, last: 1000), safeUntil: Instant(milliseconds: 10_000), generation: 3)

    @Test func itAllowsUpToButNotAtTheDeadline() {
        #expect(window.allows(now: Instant(milliseconds: 9_999), generation: 3))
        #expect(!window.allows(now: Instant(milliseconds: 10_000), generation: 3))
        #expect(!window.allows(now: Instant(milliseconds: 12_000), generation: 3))
    }

    @Test func itAllowsNothingOnceAnythingChanged() {
        #expect(!window.allows(now: Instant(milliseconds: 0), generation: 4))
    }

    @Test func itAgreesWithTheLeaseAtEveryInstantAroundTheDeadline() throws {
        var lease = NodeLeaseStateMachine(timing: ClusterTiming(ttlSeconds: 10, keepAliveIntervalMilliseconds: 2_000, safetyMarginMilliseconds: 500))
        lease.grantSent(now: Instant(milliseconds: 0))
        _ = lease.granted(EtcdLease(id: 1, ttlSeconds: 10))
        let until = try #require(lease.safeUntil)
        let w = DecisionWindow(block: window.block, safeUntil: until, generation: 0)
        for offset: Int64 in -2...2 {
            let now = Instant(milliseconds: until.milliseconds + offset)
            #expect(w.allows(now: now, generation: 0) == lease.isSafe(at: now))
        }
    }
}
