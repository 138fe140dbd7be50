import ArbiterCore
import ArbiterIO
import ArbiterWire
import Dispatch

/// Delivers one hook's events: its outbox, on a queue of its own, never a panel's. A
/// panel only hands deliveries over (`submit`); nothing here ever makes it wait.
public final class HookRunner: @unchecked Sendable {
    public let panel: String
    public let index: Int
    public let config: HookConfig
    public let url: HookURL
    /// `<panel>/<index>`: how the store and the logs name the hook.
    public let key: String
    let queue: DispatchQueue
    // On `queue`.
    private var outbox: HookOutbox
    private var timer: DispatchSourceTimer?
    /// What `timer` is set for. Setting a timer wakes Dispatch's manager thread; a busy
    /// hook's every hand-over and answer would otherwise set it to what it already was.
    private var armed = Armed.unarmed
    private var stopped = false
    private let sender: any HookSender
    private let clock: any TimeSource
    private let store: (any HookPersistence)?
    private let log: HookLog
    public let stats = Locked(HookStats())

    public init(
        panel: String, index: Int, config: HookConfig, url: HookURL, sender: any HookSender, clock: any TimeSource, store: (any HookPersistence)?,
        log: HookLog, policy: HookOutbox.Policy? = nil, jitter: (@Sendable (Int64) -> Int64)? = nil
    ) {
        self.panel = panel
        self.index = index
        self.config = config
        self.url = url
        self.key = "\(panel)/\(index)"
        self.sender = sender
        self.clock = clock
        self.store = store
        self.log = log
        self.queue = DispatchQueue(label: "arbiter.hook.\(panel).\(index)")
        let p = policy ?? HookOutbox.Policy(maxAgeNs: config.maxAgeS * 1_000_000_000, maxPending: config.maxPending)
        outbox = jitter.map { HookOutbox(policy: p, jitter: $0) } ?? HookOutbox(policy: p)
    }

    public func start() {
        queue.async {
            let timer = DispatchSource.makeTimerSource(queue: self.queue)
            timer.setEventHandler { [unowned self] in
                self.armed = .unarmed
                self.pump()
            }
            timer.resume()
            self.timer = timer
            self.pump()
        }
    }

    /// Stops starting attempts; those in flight end by their deadline, unreported.
    public func stop() {
        queue.sync {
            stopped = true
            timer?.cancel()
            timer = nil
        }
    }

    /// Hands deliveries over; `ageNs`, per delivery, for ones reloaded after a restart.
    public func submit(_ deliveries: [HookDelivery], ageNs: [Int64] = []) {
        queue.async {
            let now = self.clock.nanoseconds()
            for (i, d) in deliveries.enumerated() {
                guard case .dropped(let first) = self.outbox.enqueue(d, ageNs: i < ageNs.count ? ageNs[i] : 0, now: now) else { continue }
                self.stats.withLock { $0.overflowed += 1 }
                self.store?.done(hook: self.key, id: d.id)
                if first {
                    self.log.write(
                        .warning, "hook backlog full; newest events dropped until it drains",
                        ["hook": self.key, "max_pending": "\(self.config.maxPending)", "seq": "\(d.seq)"])
                }
            }
            self.pump()
        }
    }

    /// Forgets every delivery not yet done, without marking any done: in a cluster, when
    /// this node stops leading the panel, its next leader delivers them from etcd (the
    /// ones in flight may arrive twice, with the same `webhook-id`).
    public func abandon() {
        queue.async {
            self.outbox.abandonAll()
            self.stats.withLock { $0.pending = 0 }
        }
    }

    /// Looks at the outbox now (a test moved its manual clock on). On any queue.
    public func poke() { queue.async { self.pump() } }

    /// Runs `body` on the hook's queue once everything handed over before is handled.
    public func sync<R>(_ body: () -> R) -> R { queue.sync(execute: body) }

    private func pump() {
        guard !stopped else { return }
        let now = clock.nanoseconds()
        let (attempts, expired) = outbox.takeAttempts(now: now)
        for d in expired { dropped(d, reason: "older than max_age_s", startedFailing: false, expired: true) }
        for attempt in attempts { begin(attempt) }
        let pending = outbox.pending
        stats.withLock { $0.pending = pending }
        let want = outbox.nextWake(now: now).map { Armed.at($0) } ?? .never
        guard want != armed else { return }
        armed = want
        if case .at(let wake) = want {
            timer?.schedule(deadline: .now() + .nanoseconds(Int(max(0, wake - now))))
        } else {
            timer?.schedule(deadline: .distantFuture)
        }
    }

    enum Armed: Equatable {
        case unarmed
        case never
        /// At this time on `clock`.
        case at(Int64)
    }

    private func begin(_ attempt: HookOutbox.Attempt) {
        let d = attempt.delivery
        // Unix seconds of the attempt: a receiver refuses a timestamp far from its clock.
        let headers = WebhookSignature.headers(id: d.id, timestamp: clock.wallMilliseconds() / 1000, body: d.body, key: config.secret)
        sender.send(HookRequest(url: url, headers: headers, body: d.body), timeoutMs: config.timeoutMs) { outcome in
            self.queue.async { self.finished(attempt, outcome) }
        }
    }

    private func finished(_ attempt: HookOutbox.Attempt, _ outcome: HookOutcome) {
        guard !stopped, let (d, result) = outbox.finish(attempt.serial, outcome, now: clock.nanoseconds()) else { return }
        let wall = clock.wallMilliseconds()
        switch result {
        case .delivered(let latency, let recovered):
            store?.done(hook: key, id: d.id)
            // With the count, before the log line: /api/hooks read after "hook delivered"
            // showed it delivered and still pending.
            let pending = outbox.pending
            stats.withLock {
                $0.pending = pending
                $0.delivered += 1
                $0.lastSuccessWallMs = wall
                $0.latency.record(UInt64(max(0, latency)))
            }
            if recovered { log.write(.info, "hook delivering again", ["hook": key, "url": config.url]) }
            if log.writesDebug { log.write(.debug, "hook delivered", ["hook": key, "id": d.id, "attempt": "\(attempt.number)"]) }
        case .retrying(_, let startedFailing):
            stats.withLock {
                $0.retried += 1
                $0.lastFailureWallMs = wall
                $0.lastFailureReason = outcome.reason
            }
            if startedFailing {
                log.write(.warning, "hook failing; retrying with backoff", ["hook": key, "url": config.url, "reason": outcome.reason])
            }
        case .rejected(let startedFailing):
            dropped(d, reason: outcome.reason, startedFailing: startedFailing, expired: false)
        case .expired(let startedFailing):
            dropped(d, reason: "\(outcome.reason); older than max_age_s", startedFailing: startedFailing, expired: true)
        }
        pump()
    }

    private func dropped(_ d: HookDelivery, reason: String, startedFailing: Bool, expired: Bool) {
        store?.done(hook: key, id: d.id)
        let wall = clock.wallMilliseconds()
        let pending = outbox.pending
        stats.withLock {
            $0.pending = pending
            if expired { $0.expired += 1 } else { $0.rejected += 1 }
            $0.lastFailureWallMs = wall
            $0.lastFailureReason = reason
        }
        // Every drop is logged: each is an event a receiver never gets.
        log.write(.warning, "hook event dropped", ["hook": key, "url": config.url, "id": d.id, "seq": "\(d.seq)", "reason": reason])
    }
}
