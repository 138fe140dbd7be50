import ArbiterCore

/// The tests' clock: it moves only when a test says so. Shared by the in-memory etcd and
/// the nodes, as one machine's monotonic clock would be.
final class ManualClock {
    var now = Instant(milliseconds: 1_000_000)

    func advance(_ milliseconds: Int64) {
        now = now + milliseconds
    }

    var read: () -> Instant { { self.now } }
}
