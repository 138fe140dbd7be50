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
    private let queue = OwningQueue(label: "arbiter.cluster.watch")
    /// Whether `stop` was called, and the stream open now: `stop` and `isOpen` come from
    /// other threads than the watch's.
    private let state = Locked<(stopped: Bool, stream: (any EtcdWatchStream)?)>((false, nil))

    init(etcd: any EtcdAPI, keys: EtcdKeyRange, changed: @escaping @Sendable () -> Void) {
        self.etcd = etcd
        self.keys = keys
        self.changed = changed
    }

    func start() {
        queue.queue.async { [self] in run() }
    }

    func stop() {
        let open = state.withLock {
            $0.stopped = true
            return $0.stream
        }
        open?.cancel()
    }

    /// Whether a watch is open now: changes made from here on are seen (a watch opened
    /// later starts at the revision it is opened at, and misses what came before).
    var isOpen: Bool {
        state.withLock { $0.stream != nil && !$0.stopped }
    }

    private var isStopped: Bool {
        state.withLock { $0.stopped }
    }

    private func run() {
        queue.check("the watch's loop")
        while !isStopped {
            do throws(EtcdError) {
                let opened = try etcd.watch(keys, startRevision: 0)
                state.withLock { $0.stream = opened }
                while !isStopped {
                    let started = SystemClock.monotonic.nanoseconds()
                    if try !opened.next(timeoutMilliseconds: 1000).isEmpty { changed() }
                    // A stream that answers at once (the in-memory one) must not spin.
                    if SystemClock.monotonic.nanoseconds() - started < 10_000_000 { usleep(20_000) }
                }
            } catch {
                state.withLock { $0.stream = nil }
                // Opened again after a pause; the timed steps cover the gap.
                if !isStopped { usleep(500_000) }
            }
        }
    }
}
