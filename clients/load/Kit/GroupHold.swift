import Synchronization

/// The observer-free overlap check's view of one group (one button of the load panel,
/// or one Redis key): who holds it by the generator's own reads and writes, and the
/// last release. Shared by every generator thread, so every field is an atomic.
///
/// Only `holder` decides anything; the other fields are written by the connection that
/// holds (or just held) the group, before it clears `holder` with release ordering, so
/// the next holder's acquiring compare-exchange sees them. A connection that fails the
/// exchange reads `grantAt`, `fence` and `button` only as evidence for its report.
final class GroupHold: Sendable {
    /// 0 when free; otherwise the holding connection's id + 1.
    let holder = Atomic<Int>(0)
    /// The holder's grant: global button index, fence (-1 for Redis), read time.
    let button = Atomic<Int>(-1)
    let fence = Atomic<Int64>(-1)
    let grantAt = Atomic<UInt64>(0)
    /// The last release of the group: by whom (id + 1; 0 = never), when its UP or DEL
    /// was sent, and the fence and read time of the grant it ended.
    let releasedBy = Atomic<Int>(0)
    let releasedAt = Atomic<UInt64>(0)
    let releasedFence = Atomic<Int64>(-1)
    let releasedButton = Atomic<Int>(-1)
    let releasedGrantAt = Atomic<UInt64>(0)

    init() {}
}
