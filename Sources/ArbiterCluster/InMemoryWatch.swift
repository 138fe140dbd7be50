/// A watch on `InMemoryEtcd`: collects the matching events of every write until pulled.
public final class InMemoryWatch: EtcdWatchStream {
    let keys: EtcdKeyRange
    private weak var owner: InMemoryEtcd?
    private var pending: [EtcdWatchEvent] = []
    private var cancelled = false

    init(keys: EtcdKeyRange, owner: InMemoryEtcd) {
        self.keys = keys
        self.owner = owner
    }

    func deliver(_ events: [EtcdWatchEvent]) {
        guard !cancelled else { return }
        pending.append(contentsOf: events)
    }

    public func next(timeoutMilliseconds: Int) throws(EtcdError) -> [EtcdWatchEvent] {
        guard !cancelled, let owner else { throw .unavailable("watch cancelled") }
        guard owner.isAvailable else { throw .unavailable("no majority (in-memory etcd set unavailable)") }
        // Leases that ran out by now are deleted first, so their events are in this pull.
        owner.expireLeasesNow()
        defer { pending = [] }
        return pending
    }

    public func cancel() {
        cancelled = true
        owner?.remove(self)
    }
}
