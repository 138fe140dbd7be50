import ArbiterIO
import Dispatch
import Synchronization

/// What the engines of one run share: the phase, the counters that decide when it
/// moves on, and the first fatal error. Lock-free except the error and progress slots.
final class RunControl: Sendable {
    let engineCount: Int
    let totalPeers: Int
    /// Press cycles allowed in all (`--cycles`), or Int.max.
    let cycleBudget: Int
    let warmupNanos: UInt64
    let durationNanos: UInt64
    let showsProgress: Bool
    private let phaseValue = Atomic<Int>(RunPhase.connecting.rawValue)
    let readyPeers = Atomic<Int>(0)
    let drainedEngines = Atomic<Int>(0)
    let finishedEngines = Atomic<Int>(0)
    let cyclesStarted = Atomic<Int>(0)
    /// Monotonic times: the workload started, measuring starts, it must end, it ended.
    let runStart = Atomic<UInt64>(0)
    let measureStart = Atomic<UInt64>(.max)
    let runDeadline = Atomic<UInt64>(.max)
    let measureEnd = Atomic<UInt64>(0)
    let failure = Locked<String?>(nil)
    /// The server whose CPU time is sampled with ours at the measure start and end.
    let serverPID: Int32?
    /// CPU seconds (generator, server) when measuring started and when it ended.
    let cpuAtStart = Locked<(Double, Double?)?>(nil)
    let cpuAtEnd = Locked<(Double, Double?)?>(nil)
    let progress: Locked<[ProgressSlot]>
    /// Signalled at every phase change, for the thread waiting on the run.
    let wake = DispatchSemaphore(value: 0)

    init(
        engineCount: Int, totalPeers: Int, cycleBudget: Int?, warmup: Double, duration: Double, showsProgress: Bool,
        serverPID: Int32? = nil
    ) {
        self.serverPID = serverPID
        self.engineCount = engineCount
        self.totalPeers = totalPeers
        self.cycleBudget = cycleBudget ?? .max
        self.warmupNanos = UInt64(warmup * 1e9)
        // With a cycle budget the run ends when the budget is spent, not by the clock.
        self.durationNanos = cycleBudget == nil ? UInt64(duration * 1e9) : .max / 4
        self.showsProgress = showsProgress
        self.progress = Locked(Array(repeating: ProgressSlot(), count: engineCount))
    }

    var phase: RunPhase { RunPhase(rawValue: phaseValue.load(ordering: .acquiring)) ?? .aborted }

    /// Moves from `from` to `to` if no one else did; the winner records the times.
    /// Until it has, other engines see the initial `.max` times: not measuring yet, no
    /// deadline yet, which is harmless for the microseconds it lasts.
    @discardableResult
    func advance(from: RunPhase, to: RunPhase) -> Bool {
        let won = phaseValue.compareExchange(expected: from.rawValue, desired: to.rawValue, ordering: .acquiringAndReleasing).exchanged
        guard won else { return false }
        let now = LoadClock.now()
        switch to {
        case .running:
            runStart.store(now, ordering: .relaxed)
            runDeadline.store(now + warmupNanos + durationNanos, ordering: .relaxed)
            measureStart.store(now + warmupNanos, ordering: .releasing)
        case .draining:
            measureEnd.store(now, ordering: .releasing)
            sampleCPU(into: cpuAtEnd)
        default:
            break
        }
        wake.signal()
        return true
    }

    /// Records CPU times once; the first engine to see the measure start calls it
    /// with `cpuAtStart`, the winner of the drain with `cpuAtEnd`.
    func sampleCPU(into slot: Locked<(Double, Double?)?>) {
        let sample = (CPUClock.ownSeconds(), serverPID.flatMap { CPUClock.processSeconds(pid: $0) })
        slot.withLock { if $0 == nil { $0 = sample } }
    }

    /// Stops the run with the first fatal error.
    func abort(_ reason: String) {
        failure.withLock { if $0 == nil { $0 = reason } }
        phaseValue.store(RunPhase.aborted.rawValue, ordering: .releasing)
        wake.signal()
    }

    /// Takes one press cycle from the budget; false once it is spent.
    @inline(__always)
    func takeCycle() -> Bool {
        guard cycleBudget != .max else { return true }
        return cyclesStarted.wrappingAdd(1, ordering: .relaxed).oldValue < cycleBudget
    }
}
