import ArbiterCluster
@testable import ArbiterClusterRuntime
import ArbiterCore
import ArbiterIO
import Foundation
import Testing
import ArbiterClusterTestSupport

/// Real threads and the real clock against a locked in-memory etcd, with a short lease
/// (TTL 1 s, keepalives every 100 ms, margin 200 ms: an 800 ms window) so a run takes
/// seconds. Nothing here asserts a speed; waits are bounded, on events (`Changes`).
@Suite(.serialized) struct ClusterRuntimeTests {
    let timing = ClusterTiming(ttlSeconds: 1, keepAliveIntervalMilliseconds: 100, safetyMarginMilliseconds: 200)

    func runtime(
        _ name: String, _ shared: SharedEtcd, control: SharedEtcd.View? = nil, lease: SharedEtcd.View? = nil, timing: ClusterTiming? = nil,
        recorder: Recorder
    ) -> ClusterRuntime {
        ClusterRuntime(
            name: name, advertise: "127.0.0.1:\(17000 + name.count)", panels: ["demo"],
            control: control ?? shared.view(), lease: lease ?? shared.view(), timing: timing ?? self.timing,
            stepIntervalMilliseconds: 50, clock: SystemClock.boot, callbacks: recorder.callbacks)
    }

    @Test func aNodeLeadsAndTellsTheServerWithTheFenceFloor() throws {
        let shared = SharedEtcd()
        let recorder = Recorder()
        let node = runtime("n1", shared, recorder: recorder)
        node.start()
        defer { node.stop(resign: true) }
        #expect(eventually(seconds: 5) { node.canDecide("demo") != nil })
        let block = try #require(node.canDecide("demo"))
        #expect(recorder.events.contains(.became("demo", term: block.term, floor: 0)))
        node.reserveMoreFences("demo")
        #expect(eventually(seconds: 5) { node.canDecide("demo")?.last == 2000 })
        #expect(recorder.events.contains(.extended("demo", FenceBlock(term: block.term, first: 1, last: 2000))))
    }

    /// The point of the runtime: the control queue stuck in an etcd call for longer than
    /// the whole safe window does not stop the keepalives, so the leader keeps its panel.
    /// A TTL of 2 s here (a 1.8 s window), not the suite's 1 s: with an 800 ms window, a
    /// machine busy enough to starve the lease's thread that long (the sanitizer runs, with
    /// every other suite in parallel) failed it once, for a reason that is not the one
    /// under test.
    @Test func aStuckControlCallDoesNotDelayKeepalives() throws {
        let shared = SharedEtcd()
        let control = shared.view()
        let recorder = Recorder()
        let timing = ClusterTiming(ttlSeconds: 2, keepAliveIntervalMilliseconds: 100, safetyMarginMilliseconds: 200)
        let node = runtime("n1", shared, control: control, timing: timing, recorder: recorder)
        node.start()
        defer { control.release(); node.stop(resign: true) }
        #expect(eventually(seconds: 5) { node.canDecide("demo") != nil })
        let before = node.statistics.keepAlivesAnswered
        control.hold()
        let heldAt = Instant(milliseconds: SystemClock.boot.milliseconds())
        // 22 keepalives answered, one per 100 ms: longer than the whole window (1.8 s) with
        // every range and txn stuck.
        #expect(eventually(seconds: 5) { node.statistics.keepAlivesAnswered >= before + 22 })
        #expect(Instant(milliseconds: SystemClock.boot.milliseconds()).since(heldAt) > 1_800, "the keepalives came faster than their interval")
        #expect(node.canDecide("demo") != nil, "the leader lost its panel while only the control queue was stuck")
        #expect(!recorder.events.contains { if case .stopped = $0 { true } else { false } })
        control.release()
    }

    /// A decision the server was told had ended while the panel's machine still leads
    /// (the watchdog once compared it with a lease read before it began) is not left so:
    /// the node gives the key up and leads again in a new term, above the old fences.
    @Test func aPanelStoppedBehindItsMachinesBackIsLedAgainInANewTerm() throws {
        let shared = SharedEtcd()
        let recorder = Recorder()
        let node = runtime("n1", shared, recorder: recorder)
        node.start()
        defer { node.stop(resign: true) }
        #expect(eventually(seconds: 5) { node.canDecide("demo") != nil })
        let old = try #require(node.canDecide("demo"))
        node.stopDecidingBehindTheMachineForTesting("demo")
        #expect(node.canDecide("demo") == nil)
        #expect(eventually(seconds: 5) { node.canDecide("demo").map { $0.term > old.term } ?? false }, "the panel stays undecided")
        let new = try #require(node.canDecide("demo"))
        #expect(new.first > old.last)
    }

    /// With the lease unanswered and the control queue stuck too, the watchdog still stops
    /// the panel (once: the control queue's own step-down later is not repeated), and
    /// `canDecide` refuses from the deadline on.
    @Test func theWatchdogStopsAtTheDeadlineWhileTheControlQueueIsStuck() throws {
        let shared = SharedEtcd()
        let control = shared.view()
        let lease = shared.view()
        let recorder = Recorder()
        let node = runtime("n1", shared, control: control, lease: lease, recorder: recorder)
        node.start()
        defer { control.release(); lease.setFailing(false); node.stop(resign: false) }
        #expect(eventually(seconds: 5) { node.canDecide("demo") != nil })
        control.hold()
        lease.setFailing(true)
        #expect(eventually(seconds: 5) { recorder.events.contains { if case .stopped("demo", _, .leaseDeadline) = $0 { true } else { false } } })
        #expect(node.canDecide("demo") == nil)
        #expect(recorder.events.filter { if case .stopped = $0 { true } else { false } }.count == 1, "stopped once, not again by the control queue")
        control.release()
        lease.setFailing(false)
        // Everything recovers by itself: a new lease or the old one renewed, the panel again.
        #expect(eventually(seconds: 10) { node.canDecide("demo") != nil })
    }

    @Test func aSilentLeadersPanelMovesAboveEveryFenceItHad() throws {
        let shared = SharedEtcd()
        let r1 = Recorder()
        let r2 = Recorder()
        let n1 = runtime("n1", shared, recorder: r1)
        n1.start()
        #expect(eventually(seconds: 5) { n1.canDecide("demo") != nil })
        let old = try #require(n1.canDecide("demo"))
        let n2 = runtime("n2", shared, recorder: r2)
        n2.start()
        defer { n2.stop(resign: true) }
        #expect(eventually(seconds: 5) { r2.events.contains(.leader("demo", node: "n1", address: "127.0.0.1:17002", term: old.term)) })
        n1.stop(resign: false)  // as a crash: no resignation, no revoke
        #expect(eventually(seconds: 10) { n2.canDecide("demo") != nil })
        let new = try #require(n2.canDecide("demo"))
        #expect(new.term > old.term)
        #expect(new.first > old.last)
        #expect(r2.events.contains(.became("demo", term: new.term, floor: new.first - 1)))
        #expect(n2.nodeAddresses()["n2"] == "127.0.0.1:17002")
        #expect(n2.address(ofNode: "n2") == "127.0.0.1:17002")
        #expect(n2.address(ofNode: "nobody") == nil)
    }

    @Test func aCleanStopHandsThePanelOverAtOnce() throws {
        let shared = SharedEtcd()
        let r1 = Recorder()
        let r2 = Recorder()
        let n1 = runtime("n1", shared, recorder: r1)
        n1.start()
        #expect(eventually(seconds: 5) { n1.canDecide("demo") != nil })
        let n2 = runtime("n2", shared, recorder: r2)
        n2.start()
        defer { n2.stop(resign: true) }
        #expect(eventually(seconds: 5) { r2.events.contains { if case .leader("demo", "n1", _, _) = $0 { true } else { false } } })
        n1.stop(resign: true)
        let term = try #require(r1.events.compactMap { if case .became(_, let t, _) = $0 { t } else { nil } }.last)
        #expect(r1.events.contains(.stopped("demo", term: term, .shutdown)))
        #expect(n1.canDecide("demo") == nil)
        #expect(eventually(seconds: 5) { n2.canDecide("demo") != nil })
    }
}

/// The server reads the node list from inside its callbacks (to send kiosks where to go).
@Suite struct ClusterRuntimeCallbackTests {
    final class Box: @unchecked Sendable {
        let lock = NSLock()
        var runtime: ClusterRuntime?
        var read: [String: String]?
    }

    @Test func nodeAddressesCanBeReadFromACallback() throws {
        let shared = SharedEtcd()
        let box = Box()
        let timing = ClusterTiming(ttlSeconds: 1, keepAliveIntervalMilliseconds: 100, safetyMarginMilliseconds: 200)
        let callbacks = ClusterRuntimeCallbacks(becameLeader: { _, _, _, _ in
            box.lock.lock()
            let runtime = box.runtime
            box.lock.unlock()
            let addresses = runtime?.nodeAddresses()
            box.lock.lock()
            box.read = addresses
            box.lock.unlock()
        })
        let node = ClusterRuntime(
            name: "n1", advertise: "127.0.0.1:17001", panels: ["demo"], control: shared.view(), lease: shared.view(),
            timing: timing, stepIntervalMilliseconds: 50, clock: SystemClock.boot, callbacks: callbacks)
        box.lock.lock()
        box.runtime = node
        box.lock.unlock()
        node.start()
        defer { node.stop(resign: true) }
        #expect(
            eventually(seconds: 5) {
                box.lock.lock(); defer { box.lock.unlock() }; return box.read != nil
            })
    }
}

/// The write-side view of the lease (`writableLeaseID`): a decision made just before the
/// safe deadline may still be written for half the safety margin after it, never later.
@Suite struct WritableLeaseTests {
    @Test func writesMayTrailTheSafeDeadlineByHalfTheMarginOnly() throws {
        let timing = ClusterTiming(ttlSeconds: 1, keepAliveIntervalMilliseconds: 100, safetyMarginMilliseconds: 200)
        let start = Instant(milliseconds: SystemClock.boot.milliseconds())
        let now = ManualClock(nanoseconds: start.nanoseconds)
        let shared = SharedEtcd()
        let lease = shared.view()
        let node = ClusterRuntime(
            name: "n1", advertise: "127.0.0.1:17001", panels: ["demo"], control: shared.view(), lease: lease, timing: timing,
            stepIntervalMilliseconds: 50, clock: now, callbacks: Recorder().callbacks)
        node.start()
        defer { lease.setFailing(false); node.stop(resign: false) }
        #expect(eventually(seconds: 5) { node.safeLeaseID() != nil })
        let id = node.safeLeaseID()
        // No renewal from here on: the clock never moved, so the deadline is start + 800 ms.
        lease.setFailing(true)
        now.advance(milliseconds: 799)
        #expect(node.safeLeaseID() == id && node.writableLeaseID() == id)
        now.advance(milliseconds: 1)
        #expect(node.safeLeaseID() == nil, "no deciding from the deadline on")
        #expect(node.writableLeaseID() == id, "a decision of just before may still be written")
        now.advance(milliseconds: 99)
        #expect(node.writableLeaseID() == id)
        now.advance(milliseconds: 1)
        #expect(node.writableLeaseID() == nil, "past half the margin nothing decided under it is written")
    }
}
