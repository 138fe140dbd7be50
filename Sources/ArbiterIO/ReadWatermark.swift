import Synchronization

/// Up to when every loop of a server has read its sockets: a buzzer press that arrived
/// before then has no press that arrived earlier still unread, so it can be ranked
/// without waiting out its group's decision window, which stays the cap.
///
/// Each loop publishes a time it has read through (`ReadMark`): the clock read just
/// before an epoll_wait, once that wait's batch is handled, if the batch was whole (not
/// cut at epoll's limit, every read drained). Anything that reached a socket before the
/// clock read was on epoll's ready list when the wait collected it. A wait that blocked
/// publishes its start: a loop blocked in epoll_wait (or in Dispatch, between drains)
/// publishes nothing, however long nothing comes, and data may have reached it that it
/// has not woken for yet (a wake-up takes 45-50 us on a halted vCPU, far more on a busy
/// machine). So a waiter kicks the loops behind it (`ReadMark.kick`): each looks once
/// without waiting, and publishes a time after the kick.
public final class ReadWatermark: Sendable {
    package let marks: [ReadMark]
    /// The lowest read-through a waiter wants (`Int64.max`: none), all a publish reads
    /// when nobody waits.
    private let wanted = Atomic<Int64>(.max)
    private let waiters = Locked<[Waiter]>([])
    /// Accepted sockets that the loop they went to has not looked at since it took them
    /// in, and what every loop had read through when the first was accepted. A
    /// connection's bytes can come before its socket is in any epoll set, and the loop
    /// that accepted it says it has read through its batch; the watermark stays here
    /// until each is looked at.
    private let handOffs = Locked<(count: Int, through: Int64)>((0, .max))
    /// `handOffs.through`, written under its lock and read without it.
    private let heldAt = Atomic<Int64>(.max)

    /// How much later than its stamp a press may show on a loop's ready list: the stamp
    /// is moved onto the monotonic clock within half of `ArrivalStamp.maxSampleSpreadNs`
    /// (each loop samples its own offset), and the kernel stamps a segment before TCP
    /// queues it on the socket and wakes epoll (microseconds on loopback).
    package static let stampErrorNs: Int64 = 50_000

    /// How far an arrival lies behind what its loop had already read through (`mark`),
    /// past the stamp error; nil when it does not. Such a press was on no ready list when
    /// the loop looked, so the kernel queued it later than it stamped it, and a press
    /// ranked on that mark may have been ranked before it.
    package static func lag(of arrival: Int64, behind mark: Int64) -> Int64? {
        arrival &+ stampErrorNs < mark ? mark &- arrival : nil
    }

    private struct Waiter: Sendable {
        var through: Int64
        var wake: @Sendable () -> Void
    }

    package init(loops: Int) throws(Sys.Failure) {
        var marks: [ReadMark] = []
        for _ in 0..<loops { marks.append(try ReadMark()) }
        self.marks = marks
    }

    /// The time every loop has read through (0 before each has looked once).
    package var readThrough: Int64 { min(marksThrough, heldAt.load(ordering: .sequentiallyConsistent)) }

    private var marksThrough: Int64 {
        var low = Int64.max
        for mark in marks { low = min(low, mark.readThrough) }
        return low
    }

    /// A socket was accepted, and goes to some loop: until that loop has looked at it, the
    /// watermark stays where the loops were. Every socket accepted must be taken in
    /// (`EventLoop.register`), or it stays there for good. On the accepting loop, before
    /// its batch ends.
    func handingOff() {
        let low = marksThrough
        handOffs.withLock { h in
            if h.count == 0 {
                h.through = low
                heldAt.store(low, ordering: .sequentiallyConsistent)
            }
            h.count += 1
        }
    }

    /// Loop `index` took an accepted socket into its epoll set at `time`; it looks again
    /// at once, whether or not the socket has bytes. On that loop.
    func takingIn(_ index: Int, at time: Int64) {
        marks[index].owe(since: time)
        marks[index].kick()
    }

    /// Calls `wake` (on some loop's thread) once every loop has read through `time`,
    /// kicking those behind it; false, and no call, when they already have. `time` must
    /// not be ahead of the clock: a kicked loop looks once, and publishes when it looked.
    /// Any thread.
    package func wake(onceReadThrough time: Int64, _ wake: @escaping @Sendable () -> Void) -> Bool {
        if readThrough >= time { return false }
        waiters.withLock { list in
            list.append(Waiter(through: time, wake: wake))
            if time < wanted.load(ordering: .relaxed) { wanted.store(time, ordering: .sequentiallyConsistent) }
        }
        // A loop that published before it could see the waiter did not wake it.
        published()
        for mark in marks where mark.readThrough < time { mark.kick() }
        return true
    }

    /// Loop `index` read through `time`. On that loop.
    func loop(_ index: Int, readThrough time: Int64) {
        marks[index].publish(time)
        let settled = marks[index].settle(lookedAt: time)
        if settled > 0 {
            handOffs.withLock { h in
                h.count = max(0, h.count - settled)
                if h.count == 0 {
                    h.through = .max
                    heldAt.store(.max, ordering: .sequentiallyConsistent)
                }
            }
        }
        published()
    }

    /// Wakes the waiters every loop has now read through.
    private func published() {
        let want = wanted.load(ordering: .sequentiallyConsistent)
        guard want != .max, readThrough >= want else { return }
        let due: [Waiter] = waiters.withLock { list in
            let low = readThrough
            var due: [Waiter] = []
            list.removeAll { waiter in
                guard waiter.through <= low else { return false }
                due.append(waiter)
                return true
            }
            wanted.store(list.lazy.map(\.through).min() ?? .max, ordering: .sequentiallyConsistent)
            return due
        }
        for waiter in due { waiter.wake() }
    }
}
