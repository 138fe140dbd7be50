import ArbiterCluster
import ArbiterCore
import Foundation

/// `InMemoryEtcd` behind a lock on the real clock, shared by the in-process nodes of a
/// cluster test. A view can be made to fail every call, as etcd out of reach would.
final class LockedEtcd: @unchecked Sendable {
    private let lock = NSLock()
    private let etcd: InMemoryEtcd

    init() {
        etcd = InMemoryEtcd(clock: LockedEtcd.now)
        etcd.minimumTTLSeconds = 1
    }

    @Sendable static func now() -> Instant {
        Instant(milliseconds: Int64(DispatchTime.now().uptimeNanoseconds / 1_000_000))
    }

    func with<T>(_ body: (InMemoryEtcd) throws(EtcdError) -> T) throws(EtcdError) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(etcd)
    }

    func view() -> View { View(shared: self) }

    final class View: EtcdAPI, @unchecked Sendable {
        let shared: LockedEtcd
        private let state = NSLock()
        private var failingNow = false

        init(shared: LockedEtcd) {
            self.shared = shared
        }

        func setFailing(_ failing: Bool) {
            state.lock()
            failingNow = failing
            state.unlock()
        }

        private func enter() throws(EtcdError) {
            state.lock()
            let failing = failingNow
            state.unlock()
            if failing { throw .unavailable("failing on purpose") }
        }

        func grantLease(ttlSeconds: Int64) throws(EtcdError) -> EtcdLease {
            try enter()
            return try shared.with { e throws(EtcdError) in try e.grantLease(ttlSeconds: ttlSeconds) }
        }

        func keepAlive(lease: Int64) throws(EtcdError) -> EtcdLease {
            try enter()
            return try shared.with { e throws(EtcdError) in try e.keepAlive(lease: lease) }
        }

        func revokeLease(_ id: Int64) throws(EtcdError) {
            try enter()
            try shared.with { e throws(EtcdError) in try e.revokeLease(id) }
        }

        func range(_ keys: EtcdKeyRange) throws(EtcdError) -> EtcdRangeResponse {
            try enter()
            return try shared.with { e throws(EtcdError) in try e.range(keys) }
        }

        func txn(_ txn: EtcdTxn) throws(EtcdError) -> EtcdTxnResponse {
            try enter()
            return try shared.with { e throws(EtcdError) in try e.txn(txn) }
        }

        func watch(_ keys: EtcdKeyRange, startRevision: Int64) throws(EtcdError) -> any EtcdWatchStream {
            throw .unavailable("the cluster tests do not watch")
        }
    }
}
