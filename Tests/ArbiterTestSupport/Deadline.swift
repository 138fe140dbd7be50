import Dispatch

/// A point on the monotonic clock, for the test clients' bounded waits: wall-clock
/// `Date` can jump on a VM whose time is being synced, and a wait must not end early
/// (or never) because of it.
struct Deadline {
    private let end: UInt64

    init(after seconds: Double) {
        end = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, seconds) * 1e9)
    }

    /// Seconds left, 0 once passed.
    var remaining: Double {
        let now = DispatchTime.now().uptimeNanoseconds
        return now >= end ? 0 : Double(end - now) / 1e9
    }

    var hasPassed: Bool { remaining <= 0 }
}
