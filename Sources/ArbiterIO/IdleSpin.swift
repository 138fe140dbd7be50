import Glibc

/// How long a loop that has run out of work keeps looking for more before it blocks.
///
/// A thread that blocks lets its CPU go idle, and on a virtual machine whose idle vCPUs
/// halt at once (`haltpoll.guest_halt_poll_ns=0`, as the VMs this was measured on boot)
/// waking it costs a trip through the host: 45-50 us on this 2-vCPU VM, against a few for
/// a thread still running. A relayed press waits on three such wake-ups (the relaying
/// node's link for the answer, the leader's link for the command, the reactors), so they,
/// not the work, made most of its latency (docs/BENCHMARKS.md, "Idle spinning").
///
/// This is the guest kernel's own halt polling (`drivers/cpuidle/governors/haltpoll.c`),
/// done by the loop: look without blocking for up to `windowNs`, then block. The window
/// adapts the same way. An idle spell that ended after the window but within `maxNs`
/// (a spin would have caught it) doubles it, from `growStartNs`; one longer than `maxNs`
/// (a block that timed out, or work that came late) halves it. Sparse traffic thus
/// spins for nothing after a few misses, and a closed loop of request and answer keeps
/// its window.
///
/// Between looks the spinner calls `sched_yield`: with other threads runnable on its CPU
/// it lets them run, so under load it does not take CPU from the work it is waiting for;
/// spinning without yielding cost about a quarter of the lock cycles through a relaying node.
/// What it does cost is CPU time while the machine is otherwise idle, at most `maxNs`
/// after each spell of work. `--idle-spin 0` turns it off (a CPU quota counts that time).
///
/// A value type owned by the loop's thread; the clock is passed in, so the adaptation is
/// tested without one.
public struct IdleSpin: Sendable, Equatable {
    /// The longest window: 0 turns spinning off.
    public let maxNs: Int64
    /// The window a growth starts from.
    public var growStartNs: Int64 { min(maxNs, 50_000) }
    /// How long the next idle spell is spun before the loop blocks.
    public private(set) var windowNs: Int64 = 0

    public init(maxNs: Int64) {
        self.maxNs = max(0, maxNs)
    }

    /// An idle spell ended after `idleNs` (spinning and blocking together), with work
    /// found or not: `Int64.max` for one that timed out.
    public mutating func idleEnded(afterNs idleNs: Int64) {
        if idleNs <= windowNs { return }
        if idleNs <= maxNs {
            windowNs = min(maxNs, max(growStartNs, windowNs * 2))
        } else {
            windowNs /= 2
            // Below a microsecond the looks are not worth their system calls.
            if windowNs < 1_000 { windowNs = 0 }
        }
    }

    /// One idle wait: looks with `look` (which must not block) for the window, then waits
    /// with `block` if nothing was found; the spell, timed with `now`, adapts the window.
    /// Returns what was found (0 or less: nothing). With spinning off, `block` alone.
    @inlinable public mutating func wait(now: () -> Int64, look: () -> Int, block: () -> Int) -> Int {
        guard maxNs > 0 else { return block() }
        let start = now()
        var found = spin(from: start, now: now, look)
        if found <= 0 { found = block() }
        idleEnded(afterNs: found > 0 ? now() - start : .max)
        return found
    }

    /// Looks with `look` (which must not block) until it finds work or the window has
    /// passed since `start`, yielding the CPU between looks. Returns what the last look
    /// returned (0: nothing found).
    @inlinable public func spin(from start: Int64, now: () -> Int64, _ look: () -> Int) -> Int {
        guard windowNs > 0 else { return 0 }
        for _ in 0..<1_000_000 {
            let found = look()
            if found != 0 || now() - start >= windowNs { return found }
            sched_yield()
        }
        return 0
    }
}
