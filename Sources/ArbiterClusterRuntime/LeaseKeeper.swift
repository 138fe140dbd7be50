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
    private let queue = OwningQueue(label: "arbiter.cluster.lease")
    private let calls = DispatchQueue(label: "arbiter.cluster.lease.calls", attributes: .concurrent)
    /// What the lease queue's ticks and the calls' answers share, reached only through
    /// its lock.
    private let book: Locked<LeaseBook>
    /// The tick's timer: the lease queue's (`start` and `stop` run there).
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
        self.book = Locked(LeaseBook(machine: NodeLeaseStateMachine(timing: timing)))
        self.ttlSeconds = timing.ttlSeconds
        self.changed = changed
        self.ticked = ticked
    }

    var snapshot: NodeLeaseStateMachine {
        book.withLock { $0.machine }
    }

    /// The lease, and since when it has been safe without a break, read together
    /// (`ClusterNode.externalLease`).
    var current: (lease: NodeLeaseStateMachine, safeSince: Instant?) {
        book.withLock { ($0.machine, $0.safeSince) }
    }

    var counters: ClusterRuntimeStats {
        book.withLock { $0.stats }
    }

    /// Ticks every `intervalMilliseconds`: small against the keepalive interval, so a
    /// keepalive leaves within that of when it is due and the deadline watchdog (`ticked`)
    /// fires within that of the deadline.
    func start(intervalMilliseconds: Int) {
        queue.queue.sync {
            let timer = DispatchSource.makeTimerSource(queue: queue.queue)
            timer.schedule(deadline: .now(), repeating: .milliseconds(intervalMilliseconds), leeway: .milliseconds(2))
            timer.setEventHandler { [weak self] in self?.tick() }
            self.timer = timer
            timer.resume()
        }
    }

    func stop() {
        queue.queue.sync {
            timer?.cancel()
            timer = nil
        }
    }

    private func tick() {
        queue.check("the lease's tick")
        let now = clock()
        let call = book.withLock { b -> (@Sendable () -> Void)? in
            let action = b.machine.tick(now: now)
            var call: (@Sendable () -> Void)?
            switch action {
            case .grant:
                b.machine.grantSent(now: now)
                call = { [self] in grant(sentAt: now) }
            case .keepAlive(let id) where b.inFlight < Self.maxInFlight:
                b.machine.keepAliveSent(now: now)
                b.inFlight += 1
                b.stats.keepAlivesSent += 1
                if let lastSent = b.lastSent { b.stats.longestKeepAliveGapMilliseconds = max(b.stats.longestKeepAliveGapMilliseconds, now.since(lastSent)) }
                b.lastSent = now
                call = { [self] in keepAlive(id, sentAt: now) }
            case .keepAlive, .none, .renewed, .lost:
                break
            }
            if call != nil {
                published.publish(b.machine)
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
        let after = book.withLock { b in
            switch result {
            case .success(let lease):
                _ = b.machine.granted(lease)
                b.lastRenewedSentAt = sentAt
                b.safeSince = clock()
            case .failure: b.machine.grantFailed()
            }
            b.lastSent = nil
            published.publish(b.machine)
            changes.bump()
            return b.machine
        }
        changed(after)
    }

    private func keepAlive(_ id: Int64, sentAt: Instant) {
        let result: Result<EtcdLease, EtcdError>
        do { result = .success(try etcd.keepAlive(lease: id)) } catch { result = .failure(error) }
        let (action, after) = book.withLock { b in
            b.inFlight -= 1
            let now = clock()
            let wasSafe = b.machine.isSafe(at: now)
            let action: NodeLeaseStateMachine.Action
            switch result {
            case .success(let lease):
                b.stats.keepAlivesAnswered += 1
                if let previous = b.lastRenewedSentAt {
                    b.stats.longestRenewalGapMilliseconds = max(b.stats.longestRenewalGapMilliseconds, sentAt.since(previous))
                }
                b.lastRenewedSentAt = max(b.lastRenewedSentAt ?? sentAt, sentAt)
                action = b.machine.keepAliveAnswered(lease, sentAt: sentAt)
            case .failure(let error):
                b.stats.keepAlivesFailed += 1
                action = b.machine.keepAliveFailed(error)
            }
            if case .lost = action { b.lastSent = nil }
            switch action {
            case .renewed: if !wasSafe { b.safeSince = now }
            case .lost: b.safeSince = nil
            case .none, .grant, .keepAlive: break
            }
            published.publish(b.machine)
            changes.bump()
            return (action, b.machine)
        }
        switch action {
        case .renewed, .lost: changed(after)
        case .none, .grant, .keepAlive: break
        }
    }
}
