import ArbiterIO
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// One receiver's keep-alive connections between attempts, newest last, at most
/// `capacity` of them. A connection is offered again only while it has been idle less
/// than `maxIdleNs` (under the idle limits of common servers: gunicorn's 2 s, Node's 5 s)
/// and its peer has neither closed it nor sent anything unasked.
final class IdleConnections: @unchecked Sendable {
    static let maxIdleNs: Int64 = 1_000_000_000

    struct State {
        var idle: [(fd: Int32, since: Int64)] = []
        var sweeping = false
    }

    let capacity: Int
    private let state = Locked(State())

    init(capacity: Int) { self.capacity = capacity }

    deinit {
        for kept in state.withLock({ $0.idle }) { Glibc.close(kept.fd) }
    }

    /// A connection to send on, or nil: the caller connects afresh.
    func take(now: Int64) -> Int32? {
        // Bounded: each pass removes one connection.
        while let (fd, since) = state.withLock({ $0.idle.popLast() }) {
            if now - since < Self.maxIdleNs && Self.quiet(fd) { return fd }
            Glibc.close(fd)
        }
        return nil
    }

    /// Keeps `fd` for the next attempt (closing the oldest past `capacity`).
    func put(_ fd: Int32, now: Int64) {
        let (surplus, sweep) = state.withLock { s -> (Int32?, Bool) in
            s.idle.append((fd, now))
            let surplus = s.idle.count > capacity ? s.idle.removeFirst().fd : nil
            defer { s.sweeping = true }
            return (surplus, !s.sweeping)
        }
        if let surplus { Glibc.close(surplus) }
        if sweep { scheduleSweep() }
    }

    /// Closes what outlived `maxIdleNs`, so a hook that went quiet holds no descriptor.
    private func scheduleSweep() {
        // Strong: the pool lives until its last sweep, at most `maxIdleNs` after its last use.
        HookWorkers.timers.asyncAfter(deadline: .now() + .nanoseconds(Int(Self.maxIdleNs))) { self.sweep() }
    }

    private func sweep() {
        let now = SystemClock.monotonic.nanoseconds()
        let (stale, again) = state.withLock { s -> ([Int32], Bool) in
            let stale = s.idle.filter { now - $0.since >= Self.maxIdleNs }.map(\.fd)
            s.idle.removeAll { now - $0.since >= Self.maxIdleNs }
            s.sweeping = !s.idle.isEmpty
            return (stale, s.sweeping)
        }
        for fd in stale { Glibc.close(fd) }
        if again { scheduleSweep() }
    }

    /// Nothing to read and no hang-up: an idle connection whose peer closed it, or sent
    /// bytes nobody asked for, is readable.
    static func quiet(_ fd: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, 0) == 0
    }
}
