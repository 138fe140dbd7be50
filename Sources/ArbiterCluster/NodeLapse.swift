/// Whether this node may still speak for its lease: the machine behind a node's lapse.
///
/// A node paused (SIGSTOP, a VM freeze) or cut off from etcd past its lease may have been
/// declared gone by the others: what it decided or relays under that lease must not reach
/// anyone. So the node *lapses*: it drops its leaders' frames, relays nothing and stops
/// writing output made before (`epoch` moves on), until a safe lease is back and every
/// panel it follows has resynchronised under it. Pure: the caller reads the lease and
/// the clock and carries out the actions, in order.
public struct NodeLapse: Equatable, Sendable {
    public enum State: Equatable, Sendable {
        /// No lease yet: a node starting, never registered, so nothing of it was ended.
        case unsynced
        /// The panels follow under `lease`.
        case synced(lease: Int64)
        /// The lease lapsed at `since` (ms); the panels last synchronised under `previous`
        /// (0: none).
        case lapsed(previous: Int64, since: Int64)
        /// A safe lease (`lease`; 0: none came within `giveUpMs`) is back and every panel
        /// resynchronises under it; still lapsed until `resynced`.
        case resyncing(lease: Int64)
    }

    public enum Action: Equatable, Sendable {
        /// The lapse began: every panel this node follows ends what it relayed and what
        /// its members knew of; then look for a safe lease.
        case lapsed
        /// Look for a safe lease again at `at` (ms).
        case lookAgain(at: Int64)
        /// Resynchronise every panel under `lease` (0: none), then call `resynced`.
        case resync(lease: Int64)
    }

    /// How often a lapsed node looks for a safe lease, and when it stops waiting for one
    /// (then it resynchronises without: its panels serve their members what they can).
    public static let lookEveryMs: Int64 = 50
    public static let giveUpMs: Int64 = 600_000

    public private(set) var state: State = .unsynced
    /// Counts lapses: output made under one epoch is not written in another.
    public private(set) var epoch: UInt64 = 1

    public init() {}

    /// While lapsed, nothing of a leader's is heard and nothing is relayed.
    public var isLapsed: Bool {
        switch state {
        case .unsynced, .synced: false
        case .lapsed, .resyncing: true
        }
    }

    /// The lease the panels synchronised under (0: none yet); relayed commands name it.
    public var syncedLease: Int64 {
        switch state {
        case .unsynced: 0
        case .synced(let lease), .resyncing(let lease): lease
        case .lapsed(let previous, _): previous
        }
    }

    /// Whether the panels can go on under `lease`, the lease held now (nil: none): the one
    /// they synchronised under, or any while none is. With none held, only a node that
    /// never had one agrees (its first grant under way).
    public func agrees(_ lease: Int64?, holding held: Int64?) -> Bool {
        Self.agrees(lease, holding: held, synced: syncedLease)
    }

    /// The rule of `agrees`, given the synchronised lease (0: none), for a reader that has
    /// it without the machine (`LeaseLapse` publishes it in an atomic).
    public static func agrees(_ lease: Int64?, holding held: Int64?, synced: Int64) -> Bool {
        guard let lease else { return synced == 0 && held == nil }
        return synced == 0 || synced == lease
    }

    /// A leader's frame arrived, or a command is to be relayed, with `safe` the lease that
    /// is safe now (nil: none) and `held` the one held at all. Returns whether the node is
    /// lapsed (the frame is dropped, the command not relayed), and what to do.
    ///
    /// A lease that is safe again is not enough: on waking, the lease keeper may renew
    /// (a new lease, the old one expired) before the link reads what waited in its socket.
    /// So a lease other than the one synchronised under counts as a lapse too.
    public mutating func heard(safe: Int64?, held: Int64?, now: Int64) -> (lapsed: Bool, actions: [Action]) {
        switch state {
        case .lapsed, .resyncing:
            return (true, [])
        case .unsynced:
            if let safe {
                state = .synced(lease: safe)
                return (false, [])
            }
            if held == nil { return (false, []) }
            return (true, begin(now: now))
        case .synced(let lease):
            if safe == lease { return (false, []) }
            return (true, begin(now: now))
        }
    }

    /// The node timer: a lease that lapsed while no leader's frame came is noticed too.
    /// Only after a first lease, so a node starting up is not taken for a lapsed one.
    public mutating func check(safe: Int64?, now: Int64) -> [Action] {
        switch state {
        case .lapsed, .resyncing:
            return []
        case .unsynced:
            if let safe { state = .synced(lease: safe) }
            return []
        case .synced(let lease):
            return safe == lease ? [] : begin(now: now)
        }
    }

    /// A look for a safe lease while lapsed (`Action.lookAgain`).
    public mutating func look(safe: Int64?, now: Int64) -> [Action] {
        guard case .lapsed(_, let since) = state else { return [] }
        guard safe != nil || now - since >= Self.giveUpMs else { return [.lookAgain(at: now + Self.lookEveryMs)] }
        // The new lease first: the re-joins name it. One sent under the old lease would be
        // taken by the leader for the old run's last frame, and the next frame, under the
        // new lease, would end the members it had just joined again.
        state = .resyncing(lease: safe ?? 0)
        return [.resync(lease: safe ?? 0)]
    }

    /// Every panel resynchronised (`Action.resync`): frames are heard again.
    public mutating func resynced() {
        guard case .resyncing(let lease) = state else { return }
        state = lease == 0 ? .unsynced : .synced(lease: lease)
    }

    private mutating func begin(now: Int64) -> [Action] {
        state = .lapsed(previous: syncedLease, since: now)
        epoch += 1
        return [.lapsed, .lookAgain(at: now + Self.lookEveryMs)]
    }
}
