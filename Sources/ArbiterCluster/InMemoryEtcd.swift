import ArbiterCore

/// A deterministic stand-in for etcd v3, for unit tests: one global revision bumped once
/// per write, leases that expire on the given (manual) clock, transactions with etcd's
/// compare rules, and watches that hand over every change in order.
///
/// Leases expire lazily, before every call, at `granted + ttl` on the clock: the moment a
/// real etcd could expire them at the earliest. `isAvailable = false` makes every call throw
/// `unavailable`, as etcd without a majority does once the client's timeout has passed.
public final class InMemoryEtcd: EtcdAPI {
    private struct Lease {
        var ttlSeconds: Int64
        var expiresAt: Instant
    }

    private let clock: () -> Instant
    private var store: [[UInt8]: EtcdKeyValue] = [:]
    private var leases: [Int64: Lease] = [:]
    private var nextLeaseID: Int64 = 7_587_000_000_000_000_001
    private var watchers: [InMemoryWatch] = []
    public private(set) var revision: Int64 = 1
    public var isAvailable = true
    /// etcd refuses TTLs under its minimum and grants the minimum instead.
    public var minimumTTLSeconds: Int64 = 2

    public init(clock: @escaping () -> Instant) {
        self.clock = clock
    }

    public func grantLease(ttlSeconds: Int64) throws(EtcdError) -> EtcdLease {
        try begin()
        let ttl = max(ttlSeconds, minimumTTLSeconds)
        let id = nextLeaseID
        nextLeaseID += 1
        leases[id] = Lease(ttlSeconds: ttl, expiresAt: clock() + ttl * 1000)
        return EtcdLease(id: id, ttlSeconds: ttl)
    }

    public func keepAlive(lease id: Int64) throws(EtcdError) -> EtcdLease {
        try begin()
        guard var lease = leases[id] else { throw .leaseNotFound }
        lease.expiresAt = clock() + lease.ttlSeconds * 1000
        leases[id] = lease
        return EtcdLease(id: id, ttlSeconds: lease.ttlSeconds)
    }

    public func revokeLease(_ id: Int64) throws(EtcdError) {
        try begin()
        guard leases[id] != nil else { throw .leaseNotFound }
        dropLease(id)
    }

    public func range(_ keys: EtcdKeyRange) throws(EtcdError) -> EtcdRangeResponse {
        try begin()
        return EtcdRangeResponse(revision: revision, kvs: lookup(keys))
    }

    public func txn(_ txn: EtcdTxn) throws(EtcdError) -> EtcdTxnResponse {
        try begin()
        let succeeded = txn.compare.allSatisfy { $0.holds(on: store[$0.key]) }
        let ops = succeeded ? txn.success : txn.failure
        for case .put(_, _, let lease) in ops where lease != 0 && leases[lease] == nil {
            throw .leaseNotFound
        }
        let next = revision + 1
        var changed: [EtcdWatchEvent] = []
        var results: [EtcdOperationResult] = []
        for op in ops {
            switch op {
            case .range(let keys):
                results.append(.range(lookup(keys)))
            case .put(let key, let value, let lease):
                let previous = store[key]
                let kv = EtcdKeyValue(
                    key: key, value: value, createRevision: previous?.createRevision ?? next,
                    modRevision: next, version: (previous?.version ?? 0) + 1, lease: lease)
                store[key] = kv
                changed.append(EtcdWatchEvent(kind: .put, kv: kv, previous: previous))
                results.append(.put)
            case .delete(let keys):
                let doomed = lookup(keys)
                for kv in doomed {
                    store[kv.key] = nil
                    changed.append(deletion(of: kv, at: next))
                }
                results.append(.delete(deleted: Int64(doomed.count)))
            }
        }
        if !changed.isEmpty { commit(changed, at: next) }
        return EtcdTxnResponse(succeeded: succeeded, revision: revision, results: results)
    }

    /// Delivers every change from now on; `startRevision` is not replayed (no history kept).
    public func watch(_ keys: EtcdKeyRange, startRevision: Int64) throws(EtcdError) -> any EtcdWatchStream {
        try begin()
        let watch = InMemoryWatch(keys: keys, owner: self)
        watchers.append(watch)
        return watch
    }

    /// Convenience for tests: a plain put with no compare.
    public func put(_ key: String, _ value: String, lease: Int64 = 0) throws(EtcdError) {
        _ = try txn(EtcdTxn(compare: [], success: [.put(key, value, lease: lease)]))
    }

    /// Convenience for tests: the current value of one key.
    public func get(_ key: String) throws(EtcdError) -> EtcdKeyValue? {
        try range(.key(key)).kvs.first
    }

    /// Whether the lease is still alive at the clock's current time.
    public func leaseIsAlive(_ id: Int64) -> Bool {
        expireLeases()
        return leases[id] != nil
    }

    func expireLeasesNow() {
        expireLeases()
    }

    func remove(_ watch: InMemoryWatch) {
        watchers.removeAll { $0 === watch }
    }

    private func begin() throws(EtcdError) {
        guard isAvailable else { throw .unavailable("no majority (in-memory etcd set unavailable)") }
        expireLeases()
    }

    private func expireLeases() {
        let now = clock()
        let expired = leases.filter { $0.value.expiresAt <= now }.map(\.key).sorted()
        for id in expired { dropLease(id) }
    }

    private func dropLease(_ id: Int64) {
        leases[id] = nil
        let doomed = store.values.filter { $0.lease == id }.sorted { $0.key.lexicographicallyPrecedes($1.key) }
        guard !doomed.isEmpty else { return }
        let next = revision + 1
        for kv in doomed { store[kv.key] = nil }
        commit(doomed.map { deletion(of: $0, at: next) }, at: next)
    }

    private func deletion(of kv: EtcdKeyValue, at revision: Int64) -> EtcdWatchEvent {
        EtcdWatchEvent(
            kind: .delete,
            kv: EtcdKeyValue(key: kv.key, value: [], createRevision: 0, modRevision: revision, version: 0, lease: 0),
            previous: kv)
    }

    private func commit(_ events: [EtcdWatchEvent], at next: Int64) {
        revision = next
        for watch in watchers { watch.deliver(events.filter { watch.keys.contains($0.kv.key) }) }
    }

    private func lookup(_ keys: EtcdKeyRange) -> [EtcdKeyValue] {
        if keys.rangeEnd == nil { return store[keys.key].map { [$0] } ?? [] }
        return store.values.filter { keys.contains($0.key) }.sorted { $0.key.lexicographicallyPrecedes($1.key) }
    }
}
