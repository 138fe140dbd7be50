import ArbiterCluster
import ArbiterCore
import ArbiterIO
import Foundation

/// `InMemoryEtcd` behind a lock, on the real clock unless a test passes its own, so several runtimes' (or in-process
/// cluster nodes') threads can call it at once. Its `gate` can hold every call of one view until opened, as an etcd call
/// stuck for its whole timeout would, and `failing` makes one view throw `unavailable`.
package final class SharedEtcd: @unchecked Sendable {
    let lock = NSLock()
    package let etcd: InMemoryEtcd

    /// `clock`: what the leases expire by; a `ManualClock` makes them expire only when a
    /// test moves it (`EmbeddedClusterNodes`).
    package init(clock: any TimeSource = SystemClock.boot) {
        etcd = InMemoryEtcd(clock: { Instant(milliseconds: clock.milliseconds()) })
        etcd.minimumTTLSeconds = 1
    }

    package func with<T>(_ body: (InMemoryEtcd) throws(EtcdError) -> T) throws(EtcdError) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(etcd)
    }

    package func view() -> View { View(shared: self) }

    package final class View: EtcdAPI, @unchecked Sendable {
        package let shared: SharedEtcd
        private let state = NSCondition()
        private var held = false
        private var failingNow = false
        private var refusingWrites: EtcdError?
        package private(set) var calls = 0

        init(shared: SharedEtcd) {
            self.shared = shared
        }

        /// Holds every later call until `release`.
        package func hold() { state.lock(); held = true; state.unlock() }

        package func release() { state.lock(); held = false; state.broadcast(); state.unlock() }

        package func setFailing(_ failing: Bool) { state.lock(); failingNow = failing; state.unlock() }

        /// Transactions that write throw `error` from now on (nil: taken again), while reads
        /// and lease keepalives go on: etcd at its space quota (its NOSPACE alarm).
        package func refuseWrites(_ error: EtcdError?) { state.lock(); refusingWrites = error; state.unlock() }

        package var callCount: Int { state.lock(); defer { state.unlock() }; return calls }

        /// Every call bumps `Changes` as it starts and as it ends. At its start: the
        /// caller is done with what its last call answered (a runtime's state and the
        /// callbacks it made); at its end: etcd's state, or a refusal, is there to be read.
        private func call<T>(_ body: () throws(EtcdError) -> T) throws(EtcdError) -> T {
            Changes.bump()
            defer { Changes.bump() }
            try enter()
            return try body()
        }

        private func enter() throws(EtcdError) {
            state.lock()
            defer { state.unlock() }
            calls += 1
            // Bounded: a held call gives up after 10 s, as a real client's timeout would.
            let limit = Date().addingTimeInterval(10)
            while held, state.wait(until: limit) {}
            if held { throw .unavailable("held too long") }
            if failingNow { throw .unavailable("failing on purpose") }
        }

        package func grantLease(ttlSeconds: Int64) throws(EtcdError) -> EtcdLease {
            try call { () throws(EtcdError) in try shared.with { e throws(EtcdError) in try e.grantLease(ttlSeconds: ttlSeconds) } }
        }

        package func keepAlive(lease: Int64) throws(EtcdError) -> EtcdLease {
            try call { () throws(EtcdError) in try shared.with { e throws(EtcdError) in try e.keepAlive(lease: lease) } }
        }

        package func revokeLease(_ id: Int64) throws(EtcdError) {
            try call { () throws(EtcdError) in try shared.with { e throws(EtcdError) in try e.revokeLease(id) } }
        }

        package func range(_ keys: EtcdKeyRange) throws(EtcdError) -> EtcdRangeResponse {
            try call { () throws(EtcdError) in try shared.with { e throws(EtcdError) in try e.range(keys) } }
        }

        package func txn(_ txn: EtcdTxn) throws(EtcdError) -> EtcdTxnResponse {
            try call { () throws(EtcdError) in
                state.lock()
                let refusal = refusingWrites
                state.unlock()
                if let refusal, (txn.success + txn.failure).contains(where: { if case .range = $0 { false } else { true } }) { throw refusal }
                return try shared.with { e throws(EtcdError) in try e.txn(txn) }
            }
        }

        package func watch(_ keys: EtcdKeyRange, startRevision: Int64) throws(EtcdError) -> any EtcdWatchStream {
            try call { () throws(EtcdError) in
                let stream = try shared.with { e throws(EtcdError) in try e.watch(keys, startRevision: startRevision) }
                return LockedWatch(shared: shared, stream: stream)
            }
        }
    }

    /// A watch pulled under the shared lock, as the in-memory etcd is not thread-safe.
    package final class LockedWatch: EtcdWatchStream, @unchecked Sendable {
        let shared: SharedEtcd
        let stream: any EtcdWatchStream

        init(shared: SharedEtcd, stream: any EtcdWatchStream) {
            self.shared = shared
            self.stream = stream
        }

        package func next(timeoutMilliseconds: Int) throws(EtcdError) -> [EtcdWatchEvent] {
            // At its start, as a view's call: the watcher is done with the last pull (and
            // with opening the watch: `isWatching`).
            Changes.bump()
            let events = try shared.with { _ throws(EtcdError) in try stream.next(timeoutMilliseconds: timeoutMilliseconds) }
            if !events.isEmpty { Changes.bump() }
            return events
        }

        package func cancel() {
            shared.lock.lock()
            defer { shared.lock.unlock() }
            stream.cancel()
        }
    }
}
