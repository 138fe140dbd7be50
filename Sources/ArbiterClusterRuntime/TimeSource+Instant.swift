import ArbiterCore
import ArbiterIO

extension TimeSource {
    /// The reading as the cluster's `Instant`, to the millisecond: leases, etcd's TTLs and
    /// the timing they are checked against are all kept in milliseconds.
    public func instant() -> Instant { Instant(milliseconds: milliseconds()) }
}
