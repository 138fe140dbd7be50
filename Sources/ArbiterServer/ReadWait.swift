import ArbiterCore
import ArbiterIO

/// A panel's wait for the server's reactors to read through its earliest waiting buzzer
/// press (`ReadWatermark`), so that the press is ranked then rather than when its
/// group's decision window ends. Owned by the panel's queue.
struct ReadWait {
    let reads: ReadWatermark
    /// The read-through asked for, whose wake-up has not come yet.
    private var asked: Int64?

    init(_ reads: ReadWatermark) { self.reads = reads }

    /// What the core may take as read (`PanelCore.readThrough`): the reactors' read-through
    /// less how much later than its stamp a press may reach a socket's ready list.
    var readThrough: Instant { Instant(nanoseconds: reads.readThrough &- ReadWatermark.stampErrorNs) }

    /// After a visit, given the arrival of the earliest press waiting: asks to be woken
    /// (`wake`) once the reactors have read through it. Returns when the panel's timer
    /// must run instead: when the time wanted is still ahead of the clock (a reactor kicked
    /// now would look before it, and not again), or now, when it is already read through.
    mutating func ask(earliest: Instant, now: Instant, wake: @escaping @Sendable () -> Void) -> Instant? {
        let through = earliest.nanoseconds &+ ReadWatermark.stampErrorNs
        if let asked, asked <= through { return nil }
        if through > now.nanoseconds { return Instant(nanoseconds: through) }
        guard reads.wake(onceReadThrough: through, wake) else { return now }
        asked = through
        return nil
    }

    /// The wake-up came, or nothing waits any more: the next visit asks again.
    mutating func woke() { asked = nil }
}
