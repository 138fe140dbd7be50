import CSystem
import Glibc
import Synchronization

/// How far one loop has read its sockets (`ReadWatermark`): every byte that reached them
/// before `through` has been read and handed on. Only the loop moves it; any thread
/// reads it, and asks the loop for a fresh look (`kick`).
package final class ReadMark: Sendable {
    /// What the loop's epoll set reports `kickFD` with (next to the listener's).
    static let epollData = UInt64.max - 1
    /// On the loops' batch clock (monotonic nanoseconds); 0 before the first look.
    private let through = Atomic<Int64>(0)
    /// A look was asked for since the loop last took one: later asks write nothing.
    private let asked = Atomic<Bool>(false)
    /// Accepted sockets this loop took in since it last looked, and when it took the last
    /// one: a look after that settles them (`ReadWatermark.handingOff`). The loop's only.
    private let owed = Atomic<Int>(0)
    private let owedSince = Atomic<Int64>(0)
    /// An eventfd in the loop's epoll set: a write wakes a loop blocked in epoll_wait,
    /// or in Dispatch's wait on it, which would otherwise not look until data came.
    package let kickFD: Int32

    init() throws(Sys.Failure) {
        let fd = cs_eventfd()
        guard fd >= 0 else { throw Sys.Failure(call: "eventfd", errno: -fd) }
        kickFD = fd
    }

    deinit { Glibc.close(kickFD) }

    package var readThrough: Int64 { through.load(ordering: .sequentiallyConsistent) }

    /// The loop read through `time`: what it looked at before a wait, once that wait's
    /// batch is handled. On the loop.
    func publish(_ time: Int64) {
        if time > through.load(ordering: .relaxed) { through.store(time, ordering: .sequentiallyConsistent) }
    }

    /// The loop took an accepted socket into its epoll set at `time`. On the loop.
    func owe(since time: Int64) {
        owed.add(1, ordering: .relaxed)
        owedSince.store(time, ordering: .relaxed)
    }

    /// How many taken-in sockets the look at `time` settles: all, if it came after them.
    /// On the loop.
    func settle(lookedAt time: Int64) -> Int {
        let count = owed.load(ordering: .relaxed)
        guard count > 0, time > owedSince.load(ordering: .relaxed) else { return 0 }
        owed.store(0, ordering: .relaxed)
        return count
    }

    /// Asks the loop to look at its sockets without waiting and publish what it read
    /// through: a blocked loop publishes nothing, however long it has been idle. Any thread.
    func kick() {
        guard !asked.exchange(true, ordering: .sequentiallyConsistent) else { return }
        var one: UInt64 = 1
        _ = Glibc.write(kickFD, &one, 8)
    }

    /// The loop took the ask; the look it takes next is after every ask so far. On the loop.
    func tookKick() {
        var count: UInt64 = 0
        _ = Glibc.read(kickFD, &count, 8)
        asked.store(false, ordering: .sequentiallyConsistent)
    }
}
