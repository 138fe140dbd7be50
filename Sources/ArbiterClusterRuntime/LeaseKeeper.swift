import ArbiterCluster
import ArbiterCore
import ArbiterIO
import Dispatch
import Foundation

/// The node's lease on its own serial queue, with each grant and keepalive call on a
/// concurrent queue of its own: a keepalive that hangs (etcd leaderless, an endpoint that
/// went silent) never holds up the next one, which goes out on time on its own request.
/// Out-of-order answers are harmless: the deadline only moves forward
/// (`NodeLeaseStateMachine.keepAliveAnswered`).
final class LeaseKeeper: @unchecked Sendable {
    /// Concurrent keepalives at most: more would only pile onto an etcd that is not answering.
    static let maxInFlight = 4

    private let etcd: any EtcdAPI
    private let clock: @Sendable () -> Instant
    private let queue = DispatchQueue(label: "arbiter.cluster.lease")
    private let calls = DispatchQueue(label: "arbiter.cluster.lease.calls", attributes: .concurrent)
    private let lock = Locked(OwnerState())
    private var machine: NodeLeaseStateMachine
    private var inFlight = 0
    private var lastSent: Instant?
    private var lastRenewedSentAt: Instant?
    /// Since when `machine`'s lease has been safe without a break: set by a grant, and by
    /// a renewal that came after the deadline had passed; nil while no lease is held.
    private var safeSince: Instant?
    private var stats = ClusterRuntimeStats()
    private var timer: DispatchSourceTimer?
    private let ttlSeconds: Int64
    /// Called (on the calls queue) with the machine after every change of its deadline or lease.
    private let changed: @Sendable (NodeLeaseStateMachine) -> Void
    /// Called on the lease queue at every tick, after the lease's own work.
    private let ticked: @Sendable (Instant) -> Void
    /// Bumped under `lock` after every change of `machine` (`DecisionWindow`).
    let changes = ChangeCounter()
    /// `machine`'s lease and deadline, published under `lock` after every change of it.
    let published = PublishedLease()

    init(
        etcd: any EtcdAPI, timing: ClusterTiming, clock: @escaping @Sendable () -> Instant,
        changed: @escaping @Sendable (NodeLeaseStateMachine) -> Void, ticked: @escaping @Sendable (Instant) -> Void
    ) {
        self.etcd = etcd
        self.clock = clock
        self.machine = NodeLeaseStateMachine(timing: timing)
        self.ttlSeconds = timing.ttlSeconds
        self.changed = changed
        self.ticked = ticked
    }

    var snapshot: NodeLeaseStateMachine {
        lock.withLock { _ in machine }
    }

    /// The lease, and since when it has been safe without a break, read together
    /// (`ClusterNode.externalLease`).
    var current: (lease: NodeLeaseStateMachine, safeSince: Instant?) {
        lock.withLock { _ in (machine, safeSince) }
    }

    var counters: ClusterRuntimeStats {
        lock.withLock { _ in stats }
    }

    /// Ticks every `intervalMilliseconds`: small against the keepalive interval, so a
    /// keepalive leaves within that of when it is due and the deadline watchdog (`ticked`)
    /// fires within that of the deadline.
    func start(intervalMilliseconds: Int) {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now(), repeating: .milliseconds(intervalMilliseconds), leeway: .milliseconds(2))
        timer.setEventHandler { [weak self] in self?.tick() }
        self.timer = timer
        timer.resume()
    }

    func stop() {
        queue.sync {
            timer?.cancel()
            timer = nil
        }
    }

    private func tick() {
        let now = clock()
        let call = lock.withLock { _ -> (@Sendable () -> Void)? in
            let action = machine.tick(now: now)
            var call: (@Sendable () -> Void)?
            switch action {
            case .grant:
                machine.grantSent(now: now)
                call = { [self] in grant(sentAt: now) }
            case .keepAlive(let id) where inFlight < Self.maxInFlight:
                machine.keepAliveSent(now: now)
                inFlight += 1
                stats.keepAlivesSent += 1
                if let lastSent { stats.longestKeepAliveGapMilliseconds = max(stats.longestKeepAliveGapMilliseconds, now.since(lastSent)) }
                lastSent = now
                call = { [self] in keepAlive(id, sentAt: now) }
            case .keepAlive, .none, .renewed, .lost:
                break
            }
            if call != nil {
                published.publish(machine)
                changes.bump()
            }
            return call
        }
        if let call { calls.async(execute: call) }
        ticked(now)
    }

    private func grant(sentAt: Instant) {
        let result: Result<EtcdLease, EtcdError>
        do { result = .success(try etcd.grantLease(ttlSeconds: ttlSeconds)) } catch { result = .failure(error) }
        let after = lock.withLock { _ in
            switch result {
            case .success(let lease):
                _ = machine.granted(lease)
                lastRenewedSentAt = sentAt
                safeSince = clock()
            case .failure: machine.grantFailed()
            }
            lastSent = nil
            published.publish(machine)
            changes.bump()
            return machine
        }
        changed(after)
    }

    private func keepAlive(_ id: Int64, sentAt: Instant) {
        let result: Result<EtcdLease, EtcdError>
        do { result = .success(try etcd.keepAlive(lease: id)) } catch { result = .failure(error) }
        let (action, after) = lock.withLock { _ in
            inFlight -= 1
            let now = clock()
            let wasSafe = machine.isSafe(at: now)
            let action: NodeLeaseStateMachine.Action
            switch result {
            case .success(let lease):
                stats.keepAlivesAnswered += 1
                if let previous = lastRenewedSentAt {
                    stats.longestRenewalGapMilliseconds = max(stats.longestRenewalGapMilliseconds, sentAt.since(previous))
                }
                lastRenewedSentAt = max(lastRenewedSentAt ?? sentAt, sentAt)
                action = machine.keepAliveAnswered(lease, sentAt: sentAt)
            case .failure(let error):
                stats.keepAlivesFailed += 1
                action = machine.keepAliveFailed(error)
            }
            if case .lost = action { lastSent = nil }
            switch action {
            case .renewed: if !wasSafe { safeSince = now }
            case .lost: safeSince = nil
            case .none, .grant, .keepAlive: break
            }
            published.publish(machine)
            changes.bump()
            return (action, machine)
        }
        switch action {
        case .renewed, .lost: changed(after)
        case .none, .grant, .keepAlive: break
        }
    }
}
