import Glibc

/// A value guarded by a pthread mutex.
///
/// Not `Synchronization.Mutex`: its lock lives in a precompiled runtime that
/// ThreadSanitizer cannot see into, so every access it guards was reported as a race.
/// A pthread mutex is intercepted by the sanitizers and costs the same uncontended.
/// `state` is `@exclusivity(unchecked)`: the mutex is the exclusivity.
package final class Locked<State>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @exclusivity(unchecked) private var state: State

    package init(_ state: State) {
        self.state = state
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inline(__always)
    package func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
