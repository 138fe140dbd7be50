import ArbiterCluster
import ArbiterCore
import ArbiterIO
import Dispatch
import Foundation

/// Drives a `ClusterNode` for real, on three queues so that nothing slow can hold up what
/// keeps the node safe:
///
/// - the **lease** queue (`LeaseKeeper`) renews the node's lease every keepalive interval,
///   each call on its own request, and runs the deadline watchdog;
/// - the **control** queue steps the `ClusterNode` (ranges, campaigns, fence reservations,
///   resignations), which may wait for etcd for a whole call timeout or two;
/// - callers on any thread ask `canDecide(panel)`, answered under a lock from the lease's
///   latest deadline and the panels this node was told to decide.
///
/// `canDecide` is the authority: it compares the clock with the deadline on every call, so
/// even a watchdog tick that comes late cannot let a decision through after the deadline.
/// The watchdog only makes sure the server *hears* of the step-down without waiting for
/// the control queue, which may be stuck in an etcd call.
public final class ClusterRuntime: @unchecked Sendable {
    public let node: String
    private let cluster: ClusterNode
    private let callbacks: ClusterRuntimeCallbacks
    private let clock: @Sendable () -> Instant
    private let control = DispatchQueue(label: "arbiter.cluster.control")
    private var keeper: LeaseKeeper!
    private let lock = Locked(OwnerState())
    /// The panels the server was told to decide. Every change bumps `tableChanges`.
    private var deciding = DecisionTable() {
        didSet { tableChanges.bump() }
    }
    private let tableChanges = ChangeCounter()
    private var leaders: [String: LeaderInfo?] = [:]
    private var stats = ClusterRuntimeStats()
    /// Under `lock`, and unchecked: a leader looks a node's address up for every frame it
    /// sends, and the dynamic exclusivity check cost each look-up about 80 instructions.
    @exclusivity(unchecked) private var registrations: [String: NodeRegistration] = [:]
    private var stepTimer: DispatchSourceTimer?
    private let stepIntervalMilliseconds: Int
    private let timing: ClusterTiming
    private var watcher: PanelKeyWatcher?
    /// A step asked for by the watch is queued once, however many changes came.
    private var watchStepQueued = false
    /// With the watch open, the keys are read when it reports a change and otherwise only
    /// every `observeEveryMilliseconds`: three nodes reading both prefixes every 100 ms
    /// kept a 3-member etcd at about a fifth of a core on a 2-core machine. On `control`.
    private var lastObservedAt: Instant?
    private var watchWasOpen = false
    static let observeEveryMilliseconds: Int64 = 1_000

    /// `control` serves the steps; `lease` only grants and keepalives, possibly several at
    /// once, so it must be safe to call from several threads (`EtcdHTTPClient` is). Give
    /// them separate clients: the lease's endpoint choice then never waits on a slow range.
    /// With `watch` (a third client: a watch holds its connection open), a change under
    /// the panels' keys runs a step at once instead of at the next timed one.
    public init(
        name: String, advertise: String, panels: [String], control controlEtcd: any EtcdAPI, lease leaseEtcd: any EtcdAPI,
        watch watchEtcd: (any EtcdAPI)? = nil, timing: ClusterTiming = .standard, keys: ClusterKeys = ClusterKeys(),
        stepIntervalMilliseconds: Int = 100, clock source: any TimeSource = SystemClock.boot, features: Set<String> = ClusterFeatures.all,
        callbacks: ClusterRuntimeCallbacks
    ) {
        self.node = name
        self.callbacks = callbacks
        let clock: @Sendable () -> Instant = { Instant(milliseconds: source.milliseconds()) }
        self.clock = clock
        self.timing = timing
        self.stepIntervalMilliseconds = stepIntervalMilliseconds
        cluster = ClusterNode(name: name, advertise: advertise, panels: panels, etcd: controlEtcd, timing: timing, keys: keys, clock: clock)
        cluster.leaseIsExternal = true
        cluster.features = features
        keeper = LeaseKeeper(
            etcd: leaseEtcd, timing: timing, clock: clock,
            changed: { [weak self] _ in self?.adopt() },
            ticked: { [weak self] now in self?.watchdog(now) })
        cluster.externalLease = { [keeper] in keeper.current }
        writableLease = WritableLease(published: keeper.published, clock: clock, slackMilliseconds: timing.safetyMarginMilliseconds / 2)
        cluster.onAction = { [weak self] panel, action in self?.perform(action, for: panel) }
        cluster.onFenceReservation = { [callbacks] panel, failure in callbacks.fenceReservation(panel, failure) }
        if let watchEtcd {
            watcher = PanelKeyWatcher(etcd: watchEtcd, keys: .prefix(keys.panels)) { [weak self] in self?.stepSoon() }
        }
    }

    public func start() {
        keeper.start(intervalMilliseconds: max(5, Int(timing.keepAliveIntervalMilliseconds) / 20))
        let timer = DispatchSource.makeTimerSource(queue: control)
        timer.schedule(deadline: .now(), repeating: .milliseconds(stepIntervalMilliseconds), leeway: .milliseconds(5))
        timer.setEventHandler { [weak self] in self?.step() }
        stepTimer = timer
        timer.resume()
        watcher?.start()
    }

    /// The watch saw a change: one extra step, soon.
    private func stepSoon() {
        let queue = withLock { () -> Bool in
            if watchStepQueued { return false }
            watchStepQueued = true
            return true
        }
        guard queue else { return }
        control.async { [weak self] in
            guard let self else { return }
            withLock { watchStepQueued = false }
            // Not after stop: the timer is gone then.
            if stepTimer != nil { step(watchSawAChange: true) }
        }
    }

    /// Stops the queues. With `resign`, gives every panel up and revokes the lease first,
    /// so the others take over at once instead of after the TTL; without, the node just
    /// goes quiet, as a crashed one would (tests use that).
    public func stop(resign: Bool) {
        watcher?.stop()
        control.sync {
            stepTimer?.cancel()
            stepTimer = nil
        }
        keeper.stop()
        if resign { control.sync { cluster.shutdown() } }
        let stopped = withLock { deciding.removeAll() }
        for (panel, block) in stopped { callbacks.stopDeciding(panel, block.term, .shutdown) }
    }

    /// The block to decide `panel` with now, nil if this node must not decide it. Safe
    /// from any thread; one lock and one clock read.
    public func canDecide(_ panel: String) -> FenceBlock? {
        decisionWindow(panel)?.block
    }

    /// `canDecide`'s answer as a window the caller can keep (`stillDecides`): nil when the
    /// answer is nil. Both change counters are read before the state, so a window is never
    /// newer than what it saw.
    public func decisionWindow(_ panel: String) -> DecisionWindow? {
        let generation = self.generation
        let lease = keeper.snapshot
        let now = clock()
        guard let safeUntil = lease.safeUntil, let block = withLock({ deciding.canDecide(panel, lease: lease, now: now) }) else { return nil }
        return DecisionWindow(block: block, safeUntil: safeUntil, generation: generation)
    }

    /// Whether `window` still gives `canDecide`'s answer now: nothing it was computed from
    /// changed since, and the lease's safe deadline has not passed. No lock: two atomic
    /// loads and a clock read, on the path of every decision.
    public func stillDecides(_ window: DecisionWindow) -> Bool {
        window.allows(now: clock(), generation: generation)
    }

    /// Changes to the lease and to the decision table, summed: both only ever grow.
    private var generation: UInt64 { keeper.changes.current &+ tableChanges.current }

    /// The running core used most of its block: reserve the next one, same term.
    public func reserveMoreFences(_ panel: String, size: UInt64? = nil) {
        control.async { [self] in cluster.reserveMoreFences(panel, size: size) }
    }

    /// Every live node's advertised address as of the last step (for the kiosk's list of
    /// nodes to fail over to). Safe from any thread, callbacks included.
    public func nodeAddresses() -> [String: String] {
        withLock { registrations }.mapValues(\.address)
    }

    /// One live node's advertised address as of the last step: what a leader's every
    /// event and reply to a follower looks up, without building the whole map.
    public func address(ofNode node: String) -> String? {
        withLock { registrations[node]?.address }
    }

    /// Whether `node` announced `feature` (`ClusterFeatures`) under its current lease, as
    /// of the last step: a frame newer than the baseline goes only to a node that did.
    public func node(_ node: String, supports feature: String) -> Bool {
        withLock { registrations[node]?.features.contains(feature) ?? false }
    }

    /// The etcd lease of every live node's registration, as last read (with
    /// `nodeAddresses`).
    public func nodeRegistrations() -> [String: Int64] {
        withLock { registrations }.mapValues(\.lease)
    }

    public var statistics: ClusterRuntimeStats {
        let lease = keeper.counters
        return withLock {
            var s = stats
            s.keepAlivesSent = lease.keepAlivesSent
            s.keepAlivesAnswered = lease.keepAlivesAnswered
            s.keepAlivesFailed = lease.keepAlivesFailed
            s.longestKeepAliveGapMilliseconds = lease.longestKeepAliveGapMilliseconds
            s.longestRenewalGapMilliseconds = lease.longestRenewalGapMilliseconds
            return s
        }
    }

    public var leaseID: Int64? { keeper.snapshot.leaseID }

    /// Whether this node's lease is held and its safe deadline is ahead. While it is not,
    /// the other nodes may already count this node as gone and have ended its sessions'
    /// grants (a pause, a stall, etcd out of reach).
    public func leaseIsSafe() -> Bool { safeLeaseID() != nil }

    /// The lease's id while it is safe (`leaseIsSafe`), else nil. A different id than
    /// before means the old lease expired: etcd removed this node's registration with
    /// it, and the others may have ended its sessions' grants.
    public func safeLeaseID() -> Int64? {
        if let lease = keeper.published.read() { return clock() < lease.safeUntil ? lease.id : nil }
        let lease = keeper.snapshot
        return lease.isSafe(at: clock()) ? lease.leaseID : nil
    }

    /// `writableLeaseID`'s fast path, for a caller that asks at every write.
    public private(set) var writableLease: WritableLease!

    /// The lease's id while what was decided under it may still be written: until half
    /// the safety margin past the safe deadline, when etcd cannot have expired it yet. A
    /// decision made just before the deadline is written microseconds after it; only a
    /// pause or a stall between the two takes the write past this.
    public func writableLeaseID() -> Int64? {
        if let id = writableLease.read() { return id }
        let lease = keeper.snapshot
        guard let until = lease.safeUntil else { return nil }
        return clock() < until + timing.safetyMarginMilliseconds / 2 ? lease.leaseID : nil
    }

    /// Every panel's leadership state and the last etcd error, read on the control queue:
    /// what a test prints when a leader does not settle.
    public func leadershipDescription() -> String {
        control.sync { "\(cluster.machines.mapValues(\.state)) lastError=\(cluster.lastError.map { "\($0)" } ?? "none")" }
    }

    /// Whether the watch on the panels' keys is open (false without a watch client).
    public var isWatching: Bool { watcher?.isOpen ?? false }

    // MARK: Private

    private func adopt() {
        control.async { [self] in
            let wasSafe = cluster.lease.isSafe(at: clock())
            // The keeper's lease as it is now: a step may have pulled a newer one than this
            // change's (`ClusterNode.externalLease`), which must not be taken back.
            let current = keeper.current
            cluster.adoptLease(current.lease, safeSince: current.safeSince)
            // A node cannot campaign while its lease is unsafe: a vacancy it saw meanwhile
            // (through the watch, which reports a change once) is acted on now, not at the
            // next timer step. Seen in a loaded CI run with a 60 s step: a stalled
            // keepalive at the moment of a resignation, and the panel left vacant.
            if !wasSafe, cluster.lease.isSafe(at: clock()), stepTimer != nil { step() }
        }
    }

    private func step(watchSawAChange: Bool = false) {
        let started = clock()
        // A watch (re)opened only sees changes from then on: read once right after it opens.
        let watching = watcher?.isOpen == true
        let observing =
            watchSawAChange || !watching || !watchWasOpen
            || lastObservedAt.map { started.since($0) >= Self.observeEveryMilliseconds } ?? true
        watchWasOpen = watching
        cluster.step(observing: observing)
        if observing { lastObservedAt = started }
        resignWhatTheServerStopped()
        let took = clock().since(started)
        let seen = cluster.registrations
        withLock {
            registrations = seen
            stats.steps += 1
            stats.longestStepMilliseconds = max(stats.longestStepMilliseconds, took)
        }
    }

    /// A panel its machine leads but the server was told to stop (by the watchdog) is
    /// given up, so it is campaigned for again in a new term. The machine follows every
    /// stop the watchdog makes rightly at its next tick, so this only ever acts if the two
    /// disagree; without it the node would keep the election key and never decide again,
    /// the panel dead until the node restarts.
    private func resignWhatTheServerStopped() {
        let leading = cluster.machines.compactMap { panel, machine -> (String, Int64)? in
            if case .leading(let term, _) = machine.state { (panel, term) } else { nil }
        }
        guard !leading.isEmpty else { return }
        let stopped = withLock { leading.filter { deciding.entries[$0.0]?.block.term != $0.1 } }
        for (panel, term) in stopped { cluster.resignIfLeading(panel, term: term) }
    }

    /// On the lease queue: once the deadline passed (or the lease is gone), every panel
    /// still marked as decided is stopped now, without waiting for the control queue.
    /// The lease is read under the table's lock: read before it, a watchdog held up there
    /// (a starved thread) compared a panel decided under a lease granted meanwhile with
    /// the lease as it was before, still being granted, and stopped it for good (a
    /// sanitizer run of the cluster tests, about one in ten: a leader that held the
    /// election key and never decided).
    private func watchdog(_: Instant) {
        let stopped = withLock {
            let ended = deciding.expire(lease: keeper.snapshot, now: clock())
            for entry in ended { stats.stepDowns[String(describing: entry.reason), default: 0] += 1 }
            return ended
        }
        for (panel, block, reason) in stopped { callbacks.stopDeciding(panel, block.term, reason) }
    }

    /// What the watchdog's race did before it read the lease under the lock: `panel`'s
    /// decision ended as the server hears it, its machine not told.
    func stopDecidingBehindTheMachineForTesting(_ panel: String) {
        let ended = withLock { () -> FenceBlock? in
            guard let block = deciding.entries[panel]?.block, deciding.stop(panel, term: block.term) else { return nil }
            return block
        }
        if let ended { callbacks.stopDeciding(panel, ended.term, .leaseLost) }
    }

    /// On the control queue, for every action of the panels' machines.
    private func perform(_ action: PanelLeadershipAction, for panel: String) {
        switch action {
        case .startDeciding(let block):
            guard let lease = cluster.lease.leaseID else { return }
            withLock { deciding.start(panel, block: block, lease: lease) }
            callbacks.becameLeader(panel, block.term, block.first - 1, block)
        case .extendFences(let block):
            let current = withLock { deciding.extend(panel, block: block) }
            if current { callbacks.fencesExtended(panel, block) }
        case .stopDeciding(let term, let reason):
            let wasDeciding = withLock {
                guard deciding.stop(panel, term: term) else { return false }
                stats.stepDowns[String(describing: reason), default: 0] += 1
                return true
            }
            // Else the watchdog already stopped it.
            if wasDeciding { callbacks.stopDeciding(panel, term, reason) }
        case .follow(let leader):
            let changed = withLock {
                guard leaders[panel] != .some(leader) else { return false }
                leaders[panel] = .some(leader)
                return true
            }
            guard changed else { return }
            callbacks.leaderChanged(panel, leader?.node, leader.flatMap { cluster.registrations[$0.node]?.address }, leader?.term)
        case .campaign, .reserveFences, .resign:
            break
        }
    }

    private func withLock<T>(_ body: () -> T) -> T {
        lock.withLock { _ in body() }
    }
}
