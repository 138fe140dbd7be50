import ArbiterCore
import ArbiterIO

/// The tests' one manual clock as these tests read it: `Instant`s, moved by whole
/// milliseconds. Shared by the in-memory etcd and the nodes, as one machine's monotonic
/// clock would be.
extension ManualClock {
    /// Where these tests' clocks start: 1,000,000 ms.
    static func forCluster() -> ManualClock { ManualClock(nanoseconds: 1_000_000_000_000) }

    var now: Instant { Instant(nanoseconds: nanoseconds()) }

    var read: () -> Instant { { self.now } }

    func advance(_ milliseconds: Int64) {
        advance(milliseconds: milliseconds)
    }
}
