import ArbiterCore

/// The node's one etcd lease, which every election key and the node's registration live
/// under. Events in, actions out; it never calls etcd itself.
///
/// The safe deadline only ever comes from an *answered* grant or keepalive, measured from
/// when that request was sent (`ClusterTiming.safeDeadline`); an unanswered keepalive
/// changes nothing, so a node cut off from etcd runs into its deadline on its own clock.
public struct NodeLeaseStateMachine: Sendable {
    public enum State: Equatable, Sendable {
        case absent
        case granting(sentAt: Instant)
        case held(lease: EtcdLease, safeUntil: Instant, lastSentAt: Instant)
        /// etcd said the lease is gone; everything under it is gone too.
        case lost(id: Int64)
    }

    public enum Action: Equatable, Sendable {
        case none
        case grant
        case keepAlive(id: Int64)
        /// Tell the panels the new deadline.
        case renewed(safeUntil: Instant)
        /// Tell the panels the lease is gone.
        case lost
    }

    public private(set) var state: State = .absent
    public let timing: ClusterTiming

    public init(timing: ClusterTiming) {
        self.timing = timing
    }

    public var leaseID: Int64? {
        switch state {
        case .held(let lease, _, _): lease.id
        case .absent, .granting, .lost: nil
        }
    }

    /// The deadline while a lease is held; nil otherwise.
    public var safeUntil: Instant? {
        switch state {
        case .held(_, let safeUntil, _): safeUntil
        case .absent, .granting, .lost: nil
        }
    }

    public func isSafe(at now: Instant) -> Bool {
        guard let safeUntil else { return false }
        return now < safeUntil
    }

    /// What is due at `now`.
    public func tick(now: Instant) -> Action {
        switch state {
        case .absent, .lost: .grant
        case .granting: .none
        case .held(let lease, _, let lastSentAt):
            now.since(lastSentAt) >= timing.keepAliveIntervalMilliseconds ? .keepAlive(id: lease.id) : .none
        }
    }

    public mutating func grantSent(now: Instant) {
        switch state {
        case .absent, .lost: state = .granting(sentAt: now)
        case .granting, .held: break
        }
    }

    public mutating func granted(_ lease: EtcdLease) -> Action {
        switch state {
        case .granting(let sentAt):
            let deadline = timing.safeDeadline(sentAt: sentAt, grantedTTLSeconds: lease.ttlSeconds)
            state = .held(lease: lease, safeUntil: deadline, lastSentAt: sentAt)
            return .renewed(safeUntil: deadline)
        case .absent, .held, .lost:
            return .none
        }
    }

    public mutating func grantFailed() {
        switch state {
        case .granting: state = .absent
        case .absent, .held, .lost: break
        }
    }

    public mutating func keepAliveSent(now: Instant) {
        switch state {
        case .held(let lease, let safeUntil, _): state = .held(lease: lease, safeUntil: safeUntil, lastSentAt: now)
        case .absent, .granting, .lost: break
        }
    }

    /// A keepalive sent at `sentAt` was answered. etcd answers a lease it no longer has
    /// with a TTL of 0.
    public mutating func keepAliveAnswered(_ lease: EtcdLease, sentAt: Instant) -> Action {
        switch state {
        case .held(let held, let safeUntil, let lastSentAt):
            guard lease.id == held.id else { return .none }
            guard lease.ttlSeconds > 0 else {
                state = .lost(id: held.id)
                return .lost
            }
            let deadline = max(safeUntil, timing.safeDeadline(sentAt: sentAt, grantedTTLSeconds: lease.ttlSeconds))
            state = .held(lease: held, safeUntil: deadline, lastSentAt: lastSentAt)
            return .renewed(safeUntil: deadline)
        case .absent, .granting, .lost:
            return .none
        }
    }

    public mutating func keepAliveFailed(_ error: EtcdError) -> Action {
        switch state {
        case .held(let held, _, _):
            switch error {
            case .leaseNotFound:
                state = .lost(id: held.id)
                return .lost
            case .unavailable, .server, .malformed:
                return .none
            }
        case .absent, .granting, .lost:
            return .none
        }
    }
}
