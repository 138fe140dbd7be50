import ArbiterCluster
import ArbiterClusterRuntime
import ArbiterCore
import ArbiterIO
import ArbiterServer
import Dispatch
import Synchronization

/// A node's `NodeLapse`, driven for real: the machine under a lock, what the hot paths
/// read published in atomics (a write asks `outputStands` at every flush, a relayed
/// command `heard` before it leaves), and its actions carried out: the panels told, the
/// safe lease looked for again on the clock the cluster runs by. Any thread.
final class LeaseLapse: @unchecked Sendable {
    private let machine = Locked(NodeLapse())
    private let lapsedFlag = Atomic<Bool>(false)
    private let syncedLeaseID = Atomic<Int64>(0)
    private let epochNow = Atomic<UInt64>(1)
    private let clock: any TimeSource
    /// The clock `markedAtMs` is read on, held here so that the check at every relayed
    /// write neither looks up the shared instance nor calls through `TimeSource`.
    private let monotonic = SystemClock.monotonic
    private let log: ServerLog
    /// Every panel this node follows ends what it relayed and what its members knew of.
    /// Set once, by the owner's init, before anything can lapse.
    var lapsedPanels: @Sendable () -> Void = {}
    /// Every panel resynchronises under the new lease; `done` once all have. Set once, by
    /// the owner's init.
    var resyncPanels: @Sendable (_ done: @escaping @Sendable () -> Void) -> Void = { $0() }
    /// The runtime and its `writableLease`, set once by `watch` before the runtime starts
    /// (and before the reactors do): read on every relayed command and every write, so
    /// plain references. `AtomicLazyReference` was measured at about 3,000 instructions per
    /// relayed request here: its generic `load` runs unspecialised in the Synchronization
    /// library, with a metadata lookup at each call.
    @exclusivity(unchecked) private var runtime: ClusterRuntime?
    @exclusivity(unchecked) private var writable: WritableLease?

    /// How long after a leader's frame was read what it makes may still be written
    /// (`RelayOptions.staleAfterMs`).
    private let staleAfterMs: Int64

    init(clock: any TimeSource, log: ServerLog, staleAfterMs: Int64) {
        self.clock = clock
        self.log = log
        self.staleAfterMs = staleAfterMs
    }

    /// The runtime is running: its leases can be read.
    func watch(_ runtime: ClusterRuntime) {
        self.runtime = runtime
        writable = runtime.writableLease
    }

    /// The epoch to mark output with that holds only under this node's lease: a leader's
    /// decisions, and what a follower passes on from its leader (`FlushList.outputEpoch`).
    /// 0 while lapsed: what is said then (failover releases, refusals) holds anyway.
    var outputEpoch: UInt64 { isLapsed ? 0 : epoch }

    /// Whether output marked with `epoch` may still be written: this node has not lapsed
    /// since, and its lease is still held (`ClusterRuntime.writableLeaseID`: at most half
    /// the safety margin past its safe deadline) and the one its panels synchronised under. A
    /// process paused (SIGSTOP, a VM freeze) between deciding a grant and writing it wakes
    /// with the write still to do; by then another node may lead the panel and have
    /// granted the group again at a higher fence, so the stale GRANTED must not reach the
    /// client (`bench/nemesis.py`, seed 21, saw one). Called at each write, under the
    /// connection's lock: it only reads atomics and the lease's snapshot.
    ///
    /// `markedAtMs` (0: none): when output passed on from a leader's frame was made. Past
    /// `staleAfterMs` the leader may have closed the link to this node as silent and ended
    /// its sessions' grants, with the lease still fine (a pause shorter than it): not
    /// written either.
    func outputStands(_ epoch: UInt64, markedAtMs: Int64) -> Bool {
        guard epoch == self.epoch, !isLapsed else { return false }
        if markedAtMs != 0, monotonic.milliseconds() - markedAtMs >= staleAfterMs { return false }
        // Not through the runtime while the published lease answers (`WritableLease`).
        if let fast = writable?.read(), let lease = fast { return agrees(lease, holding: lease) }
        guard let runtime else { return true }
        return agrees(runtime.writableLeaseID(), holding: runtime.leaseID)
    }

    var isLapsed: Bool { lapsedFlag.load(ordering: .acquiring) }

    /// The lease the panels this node follows last synchronised under (0: none yet).
    var syncedLease: Int64 { syncedLeaseID.load(ordering: .acquiring) }

    var epoch: UInt64 { epochNow.load(ordering: .acquiring) }

    /// Whether `lease` is one the panels can go on under (`NodeLapse.agrees`), read
    /// without the lock: the synchronised lease is published.
    func agrees(_ lease: Int64?, holding held: Int64?) -> Bool {
        NodeLapse.agrees(lease, holding: held, synced: syncedLease)
    }

    /// Whether a leader's frame arrives, or a command would be relayed, while lapsed;
    /// begins a lapse not noticed yet (`NodeLapse.heard`).
    func heard() -> Bool {
        if isLapsed { return true }
        guard let runtime else { return false }
        let safe = runtime.safeLeaseID()
        // The common case, without the lock: the lease the panels follow is still safe.
        if let safe, safe == syncedLease { return false }
        let held = runtime.leaseID
        let now = clock.milliseconds()
        let (lapsed, actions) = machine.withLock { machine in
            defer { publish(machine) }
            return machine.heard(safe: safe, held: held, now: now)
        }
        perform(actions)
        return lapsed
    }

    /// From the node timer (`NodeLapse.check`).
    func check() {
        guard !isLapsed, let runtime else { return }
        let safe = runtime.safeLeaseID()
        let now = clock.milliseconds()
        step { $0.check(safe: safe, now: now) }
    }

    /// One transition under the machine's lock, published, then its actions carried out.
    private func step(_ transition: (inout NodeLapse) -> [NodeLapse.Action]) {
        let actions = machine.withLock { machine in
            defer { publish(machine) }
            return transition(&machine)
        }
        perform(actions)
    }

    /// What the hot paths read, after each transition, under the machine's lock: the
    /// lease first, the flag last, so that a reader that sees the lapse end sees the new
    /// lease too.
    private func publish(_ machine: NodeLapse) {
        syncedLeaseID.store(machine.syncedLease, ordering: .releasing)
        epochNow.store(machine.epoch, ordering: .releasing)
        lapsedFlag.store(machine.isLapsed, ordering: .releasing)
    }

    private func perform(_ actions: [NodeLapse.Action]) {
        for action in actions {
            switch action {
            case .lapsed:
                log.warning(
                    "this node's lease lapsed (paused, stalled or cut off from etcd): leaders' frames are dropped and nothing is relayed until it is safe again",
                    [:])
                lapsedPanels()
            case .lookAgain(let at):
                let delay = max(0, at - clock.milliseconds())
                ClusterTimers.queue.asyncAfter(deadline: .now() + .milliseconds(Int(delay))) { [weak self] in self?.look() }
            case .resync:
                // Every panel resynchronises before any leader's frame is read again; then
                // frames are read again (`resynced`).
                resyncPanels { [weak self] in
                    guard let self else { return }
                    machine.withLock { machine in
                        machine.resynced()
                        publish(machine)
                    }
                }
            }
        }
    }

    private func look() {
        guard let runtime else { return }
        let safe = runtime.safeLeaseID()
        let now = clock.milliseconds()
        step { $0.look(safe: safe, now: now) }
    }
}
