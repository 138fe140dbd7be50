import Dispatch
import Foundation

/// "Something a test may be waiting for may have changed": bumped by the test doubles the
/// cluster and relay tests watch the servers through (`SharedEtcd`'s views on every call,
/// the runtime tests' `Recorder`, the relay hub after each delivery, `RelayTestNode` and
/// `ClusterTestNodes` on every callback and log line). `eventually` re-checks its
/// condition after each bump instead of every few milliseconds. One broadcast for the
/// whole process, not one per cluster: a waiter woken by another test's change only
/// re-checks, and the tests that wait run two at a time on a 2-core machine.
package final class Changes: @unchecked Sendable {
    package static let shared = Changes()

    private let lock = NSLock()
    private var waiters: [ObjectIdentifier: Waiter] = [:]

    /// A semaphore per waiter rather than one condition for all: a semaphore's timeout is
    /// on the monotonic clock (`DispatchTime`), an `NSCondition`'s on the wall clock, which
    /// a VM's time sync can step.
    fileprivate final class Waiter {
        let semaphore = DispatchSemaphore(value: 0)
        /// Signalled and not waited for yet: many bumps between two checks wake it once.
        var pending = false
    }

    package static func bump() { shared.bump() }

    package func bump() {
        lock.lock()
        defer { lock.unlock() }
        for waiter in waiters.values where !waiter.pending {
            waiter.pending = true
            waiter.semaphore.signal()
        }
    }

    /// Runs `body` with a waiter registered before it, so that a change between a check
    /// and the wait that follows it is not missed.
    fileprivate func watching<T>(_ body: (Waiter) -> T) -> T {
        let waiter = Waiter()
        lock.lock()
        waiters[ObjectIdentifier(waiter)] = waiter
        lock.unlock()
        defer {
            lock.lock()
            waiters[ObjectIdentifier(waiter)] = nil
            lock.unlock()
        }
        return body(waiter)
    }

    /// Until the first bump since the last return, or `deadline`; whether a bump came.
    fileprivate func next(_ waiter: Waiter, until deadline: DispatchTime) -> Bool {
        let woken = waiter.semaphore.wait(timeout: deadline) == .success
        lock.lock()
        defer { lock.unlock() }
        // A bump that came after the timeout signalled once more: take it back, or the
        // next wait would return at once for it and again for the bump it stands for.
        if !woken, waiter.pending { waiter.semaphore.wait() }
        defer { waiter.pending = false }
        return woken || waiter.pending
    }
}

/// Waits, at most `seconds`, for `condition` to hold; true if it did. The one way the
/// cluster and relay tests wait for something another thread does: an event awaited with
/// a bound, not a timing assertion. `condition` is checked again after each `Changes`
/// bump, and at most `backstopMilliseconds` apart: some of what tests read has no event
/// after it (a relay link's byte and socket counters, the server's metrics), and a check
/// just before such a change would otherwise wait out the whole bound.
@discardableResult
package func eventually(seconds: Double = 10, file: String = #fileID, line: Int = #line, _ condition: () -> Bool) -> Bool {
    let deadline = DispatchTime.now() + seconds
    return Changes.shared.watching { waiter in
        var byBackstop = false
        // Bounded: every turn waits, and none past `deadline`.
        while true {
            if condition() {
                if byBackstop, reportsBackstops { print("eventually at \(file):\(line) held only at a backstop check") }
                return true
            }
            let now = DispatchTime.now()
            if now >= deadline { return false }
            byBackstop = !Changes.shared.next(waiter, until: min(deadline, now + .milliseconds(backstopMilliseconds)))
        }
    }
}

/// `ARBITER_REPORT_BACKSTOPS=1`: says which waits needed the backstop, to find state a
/// test reads that no bump follows.
private let reportsBackstops = ProcessInfo.processInfo.environment["ARBITER_REPORT_BACKSTOPS"] == "1"

/// See `eventually`. Long next to a bump's latency (microseconds), so that a wait that
/// depends on it shows up as slow; short next to the tests' bounds.
package let backstopMilliseconds = 100
