import ArbiterCluster
import ArbiterClusterRuntime
import ArbiterCore
import ArbiterIO
import Foundation
import Testing
import ArbiterClusterTestSupport

/// The watch on `/arbiter/panels/`: a change there runs a step at once.
@Suite(.serialized) struct PanelWatchTests {
    let timing = ClusterTiming(ttlSeconds: 1, keepAliveIntervalMilliseconds: 100, safetyMarginMilliseconds: 200)

    /// n2 steps by its timer only once a minute, so only its watch can make it see n1
    /// resign and take the panel over within the test's bounded wait.
    @Test func aResignationIsActedOnThroughTheWatchAlone() throws {
        let shared = SharedEtcd()
        let r1 = Recorder()
        let r2 = Recorder()
        let n1 = ClusterRuntime(
            name: "n1", advertise: "127.0.0.1:17001", panels: ["demo"], control: shared.view(), lease: shared.view(), timing: timing,
            stepIntervalMilliseconds: 50, clock: SystemClock.boot, callbacks: r1.callbacks)
        n1.start()
        #expect(eventually(seconds: 5) { n1.canDecide("demo") != nil })
        let n2 = ClusterRuntime(
            name: "n2", advertise: "127.0.0.1:17002", panels: ["demo"], control: shared.view(), lease: shared.view(), watch: shared.view(),
            timing: timing, stepIntervalMilliseconds: 60_000, clock: SystemClock.boot, callbacks: r2.callbacks)
        n2.start()
        defer { n2.stop(resign: true) }
        // Its lease first (the keeper is not a step), and its watch open (one opened after
        // the resignation would start past it: CI saw that on a loaded machine), then n1
        // gives the panel up.
        #expect(eventually(seconds: 5) { n2.leaseIsSafe() && n2.isWatching })
        n1.stop(resign: true)
        #expect(eventually(seconds: 10) { n2.canDecide("demo") != nil }, "n2 did not take the panel over: \(r2.events)")
    }

    /// A resignation the watch reports while the node's lease is unsafe (its keepalives
    /// fail) cannot be acted on then; once the lease is safe again the node takes the
    /// panel over by itself, without waiting for its next timer step (a minute here).
    @Test func aVacancySeenWhileTheLeaseWasUnsafeIsTakenOnceItIsSafe() throws {
        let shared = SharedEtcd()
        let n1 = ClusterRuntime(
            name: "n1", advertise: "127.0.0.1:17001", panels: ["demo"], control: shared.view(), lease: shared.view(), timing: timing,
            stepIntervalMilliseconds: 50, clock: SystemClock.boot, callbacks: Recorder().callbacks)
        n1.start()
        #expect(eventually(seconds: 5) { n1.canDecide("demo") != nil })
        let r2 = Recorder()
        let lease = shared.view()
        let n2 = ClusterRuntime(
            name: "n2", advertise: "127.0.0.1:17002", panels: ["demo"], control: shared.view(), lease: lease, watch: shared.view(),
            timing: timing, stepIntervalMilliseconds: 60_000, clock: SystemClock.boot, callbacks: r2.callbacks)
        n2.start()
        defer { n2.stop(resign: true) }
        #expect(eventually(seconds: 5) { n2.leaseIsSafe() && n2.isWatching })
        lease.setFailing(true)
        #expect(eventually(seconds: 5) { !n2.leaseIsSafe() }, "the lease stayed safe with its keepalives failing")
        n1.stop(resign: true)
        // The watch's step sees the vacancy and cannot campaign.
        #expect(eventually(seconds: 5) { r2.events.contains { if case .leader(_, node: nil, _, _) = $0 { true } else { false } } })
        #expect(n2.canDecide("demo") == nil)
        lease.setFailing(false)
        #expect(eventually(seconds: 10) { n2.canDecide("demo") != nil }, "n2 did not take the panel over: \(r2.events)")
    }

    /// With its watch open, a node reads the keys when the watch reports a change and about
    /// once a second, not on every step: 30 steps of 50 ms (1.5 s) would be 60 ranges if
    /// each read them; read once a second, they are a handful. The test waits for the
    /// steps, which the runtime's own timer makes.
    @Test func aWatchingNodeReadsTheKeysOnlyNowAndThen() throws {
        let shared = SharedEtcd()
        let control = shared.view()
        let node = ClusterRuntime(
            name: "n1", advertise: "127.0.0.1:17001", panels: ["demo"], control: control, lease: shared.view(), watch: shared.view(),
            timing: timing, stepIntervalMilliseconds: 50, clock: SystemClock.boot, callbacks: Recorder().callbacks)
        node.start()
        defer { node.stop(resign: true) }
        #expect(eventually(seconds: 5) { node.canDecide("demo") != nil && node.isWatching })
        let before = control.callCount
        let stepsBefore = node.statistics.steps
        #expect(eventually { node.statistics.steps >= stepsBefore + 30 })
        let calls = control.callCount - before
        let steps = node.statistics.steps - stepsBefore
        #expect(calls <= 12, "\(calls) etcd calls in \(steps) steps: the keys are still read on every step")
        #expect(node.canDecide("demo") != nil)
    }
}
