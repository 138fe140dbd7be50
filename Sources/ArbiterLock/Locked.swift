#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value guarded by a pthread mutex: the one lock of the package. Its own module so
/// that the client library, which runs on Apple systems too and knows nothing of the
/// server, shares it; ArbiterIO re-exports it to the server's modules.
///
/// Not `Synchronization.Mutex`: its lock lives in a precompiled runtime that
/// ThreadSanitizer cannot see into, so every access it guards was reported as a race.
/// A pthread mutex is intercepted by the sanitizers and costs the same uncontended.
/// Not `NSLock` either: Foundation's lock is a class around the same pthread mutex, with
/// an Objective-C style `lock()`/`unlock()` that lets a return slip past the unlock.
/// (`Mutex` also needs iOS 18 and macOS 15, and the client supports older systems.)
///
/// `state` is `@exclusivity(unchecked)`: the mutex is the exclusivity. That holds for
/// code compiled in this module or inlined from it, hence `@inlinable`: the press path
/// takes a channel's lock from ArbiterServer.
///
/// When the guarded fields live in the owner (`Channel`, whose subclasses add fields
/// under the same lock), the state is an `OwnerState`: `withLock { _ in ... }`.
public final class Locked<State>: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline @exclusivity(unchecked) var state: State

    public init(_ state: State) {
        self.state = state
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inlinable @inline(__always)
    public func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}

/// The state of a `Locked` whose guarded fields live in its owner. One byte, not `Void`:
/// the access to a zero-sized state shares its address with the lock's own pointer, which
/// is read before the lock is taken, and ThreadSanitizer reported every use as a race.
public struct OwnerState: Sendable {
    @usableFromInline var byte: UInt8 = 0

    public init() {}
}
