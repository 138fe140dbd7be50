/// The deliveries of one hook and when each is due: pure, given `now` (monotonic
/// nanoseconds), so every backoff and expiry is tested on a manual clock.
///
/// Fresh deliveries start in event order; one that fails waits on its own backoff and
/// never holds back the rest, so receivers may see events out of order (each carries
/// `seq` and `time`). At most `maxInFlight` attempts run at once.
public struct HookOutbox: Sendable {
    public struct Policy: Sendable {
        public var maxInFlight = 4
        public var firstRetryNs: Int64 = 500_000_000
        public var maxRetryNs: Int64 = 30_000_000_000
        public var maxAgeNs: Int64
        public var maxPending: Int

        public init(maxAgeNs: Int64, maxPending: Int) {
            self.maxAgeNs = maxAgeNs
            self.maxPending = maxPending
        }
    }

    public struct Attempt: Sendable {
        public var serial: UInt64
        public var delivery: HookDelivery
        /// 1 for the first.
        public var number: Int
    }

    public enum Admission: Sendable, Equatable {
        case accepted
        /// Past `maxPending`; the first drop of an episode is the one to log.
        case dropped(firstOfEpisode: Bool)
    }

    public enum Result: Sendable, Equatable {
        case delivered(latencyNs: Int64, recovered: Bool)
        case retrying(dueNs: Int64, startedFailing: Bool)
        /// A status that no retry changes (4xx but 408 and 429).
        case rejected(startedFailing: Bool)
        /// Its next attempt would come after `maxAgeNs`.
        case expired(startedFailing: Bool)
    }

    struct Entry: Sendable {
        var delivery: HookDelivery
        var enqueuedNs: Int64
        var attempts = 0
    }

    public let policy: Policy
    /// A random amount in `0..<bound`: backoffs spread, so a receiver back up is not hit by
    /// every retry at once. Tests pass a fixed one.
    private let jitter: @Sendable (Int64) -> Int64
    private var entries: [UInt64: Entry] = [:]
    private var fresh: [UInt64] = []
    private var freshHead = 0
    private var retries = HookDueHeap()
    private var nextSerial: UInt64 = 1
    public private(set) var inFlight = 0
    private var overflowing = false
    /// Since the last attempt that failed, until one succeeds.
    public private(set) var failing = false

    public init(policy: Policy, jitter: @escaping @Sendable (Int64) -> Int64 = { Int64.random(in: 0..<max(1, $0)) }) {
        self.policy = policy
        self.jitter = jitter
    }

    /// Deliveries not yet delivered or dropped, in flight included.
    public var pending: Int { entries.count }

    /// Adds a delivery; `ageNs` is how old it already is (one reloaded after a restart).
    public mutating func enqueue(_ delivery: HookDelivery, ageNs: Int64 = 0, now: Int64) -> Admission {
        guard entries.count < policy.maxPending else {
            defer { overflowing = true }
            return .dropped(firstOfEpisode: !overflowing)
        }
        let serial = nextSerial
        nextSerial += 1
        entries[serial] = Entry(delivery: delivery, enqueuedNs: now - max(0, ageNs))
        fresh.append(serial)
        return .accepted
    }

    /// The attempts to start now, and the deliveries that grew too old waiting.
    public mutating func takeAttempts(now: Int64) -> (attempts: [Attempt], expired: [HookDelivery]) {
        var attempts: [Attempt] = []
        var expired: [HookDelivery] = []
        func start(_ serial: UInt64) {
            guard var entry = entries[serial] else { return }
            if now - entry.enqueuedNs >= policy.maxAgeNs {
                entries[serial] = nil
                expired.append(entry.delivery)
                return
            }
            entry.attempts += 1
            entries[serial] = entry
            inFlight += 1
            attempts.append(Attempt(serial: serial, delivery: entry.delivery, number: entry.attempts))
        }
        // Retries first: they are older events, and their slot is what backoff waited for.
        while inFlight < policy.maxInFlight, let next = retries.first, next.due <= now {
            _ = retries.popFirst()
            start(next.serial)
        }
        while inFlight < policy.maxInFlight, freshHead < fresh.count {
            let serial = fresh[freshHead]
            freshHead += 1
            start(serial)
        }
        if freshHead > 1024, freshHead * 2 > fresh.count {
            fresh.removeFirst(freshHead)
            freshHead = 0
        }
        endOverflowIfBelow()
        return (attempts, expired)
    }

    /// Records how an attempt went.
    public mutating func finish(_ serial: UInt64, _ outcome: HookOutcome, now: Int64) -> (delivery: HookDelivery, result: Result)? {
        guard let entry = entries[serial] else { return nil }
        inFlight -= 1
        let wasFailing = failing
        let result: Result
        switch outcome.verdict {
        case .delivered:
            entries[serial] = nil
            failing = false
            result = .delivered(latencyNs: now - entry.enqueuedNs, recovered: wasFailing)
        case .reject:
            entries[serial] = nil
            failing = true
            result = .rejected(startedFailing: !wasFailing)
        case .retry:
            failing = true
            let shift = min(entry.attempts - 1, 20)
            let backoff = min(policy.maxRetryNs, policy.firstRetryNs << shift)
            // Between half and all of the backoff.
            let due = now + backoff / 2 + jitter(backoff / 2 + 1)
            if due - entry.enqueuedNs >= policy.maxAgeNs {
                entries[serial] = nil
                result = .expired(startedFailing: !wasFailing)
            } else {
                retries.insert(due: due, serial: serial)
                result = .retrying(dueNs: due, startedFailing: !wasFailing)
            }
        }
        endOverflowIfBelow()
        return (entry.delivery, result)
    }

    /// Drops every delivery, in flight or not: a late `finish` of one finds nothing.
    public mutating func abandonAll() {
        entries = [:]
        fresh = []
        freshHead = 0
        retries = HookDueHeap()
        inFlight = 0
        overflowing = false
    }

    /// When `takeAttempts` next has something to start; nil while nothing is waiting or
    /// every slot is taken (a finishing attempt calls again).
    public func nextWake(now: Int64) -> Int64? {
        guard inFlight < policy.maxInFlight else { return nil }
        if freshHead < fresh.count { return now }
        return retries.first.map { max(now, $0.due) }
    }

    /// An overflow episode ends once the backlog is back under 90 % of the bound, so a
    /// hook at its bound logs once, not once per event.
    private mutating func endOverflowIfBelow() {
        if overflowing, entries.count * 10 < policy.maxPending * 9 { overflowing = false }
    }
}
