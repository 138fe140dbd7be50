import ArbiterIO
import Glibc

/// Waits, at most `seconds`, for `condition` to hold; true if it did. The one way the
/// cluster and relay tests wait for something another thread does: an event awaited with
/// a bound, not a timing assertion. On the monotonic clock, so a VM's wall clock being
/// synced cannot end the wait early or never. Polls every 5 ms: often enough not to
/// slow the tests, rarely enough not to starve the threads being waited for on 2 cores.
@discardableResult
package func eventually(seconds: Double = 10, _ condition: () -> Bool) -> Bool {
    let end = SystemClock.monotonic.nanoseconds() + Int64(seconds * 1e9)
    while SystemClock.monotonic.nanoseconds() < end {
        if condition() { return true }
        usleep(5_000)
    }
    return condition()
}
