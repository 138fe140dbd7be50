import ArbiterCluster
import ArbiterIO
import Dispatch
import Foundation

/// Watches `/arbiter/panels/` and asks for a step at once when anything there changes,
/// so a vacancy or a new term is acted on without waiting for the next timed step.
/// Only a hint: the step reads etcd itself, and the timed steps go on whatever happens
/// here (a broken watch is opened again after a pause).
final class PanelKeyWatcher: @unchecked Sendable {
    private let etcd: any EtcdAPI
    private let keys: EtcdKeyRange
    private let changed: @Sendable () -> Void
    private let queue = DispatchQueue(label: "arbiter.cluster.watch")
    private let lock = Locked(OwnerState())
    private var stopped = false
    private var stream: (any EtcdWatchStream)?

    init(etcd: any EtcdAPI, keys: EtcdKeyRange, changed: @escaping @Sendable () -> Void) {
        self.etcd = etcd
        self.keys = keys
        self.changed = changed
    }

    func start() {
        queue.async { [self] in run() }
    }

    func stop() {
        let open = lock.withLock { _ in
            stopped = true
            return stream
        }
        open?.cancel()
    }

    /// Whether a watch is open now: changes made from here on are seen (a watch opened
    /// later starts at the revision it is opened at, and misses what came before).
    var isOpen: Bool {
        lock.withLock { _ in stream != nil && !stopped }
    }

    private var isStopped: Bool {
        lock.withLock { _ in stopped }
    }

    private func run() {
        while !isStopped {
            do throws(EtcdError) {
                let opened = try etcd.watch(keys, startRevision: 0)
                lock.withLock { _ in stream = opened }
                while !isStopped {
                    let started = SystemClock.monotonic.nanoseconds()
                    if try !opened.next(timeoutMilliseconds: 1000).isEmpty { changed() }
                    // A stream that answers at once (the in-memory one) must not spin.
                    if SystemClock.monotonic.nanoseconds() - started < 10_000_000 { usleep(20_000) }
                }
            } catch {
                lock.withLock { _ in stream = nil }
                // Opened again after a pause; the timed steps cover the gap.
                if !isStopped { usleep(500_000) }
            }
        }
    }
}
