import ArbiterCore
import ArbiterIO
import CSystem

/// One generator thread: its share of the connections on one epoll set, driven through
/// the run's phases together with the other engines.
///
/// Everything here belongs to the engine's thread (`run()`); the run's shared state is
/// in `plan` (immutable, atomics, or locked). One epoll set and a 64 KiB read buffer
/// serve thousands of sockets, so the generator costs far less per request than the
/// server it loads.
final class Engine: @unchecked Sendable {
    let index: Int
    let plan: RunPlan
    var control: RunControl { plan.control }
    var peers: [Peer] = []
    /// Made when the thread starts (`run()`), which ends the run if it cannot be.
    var epoll: EpollSet?
    var stats = RunStats()
    /// Samples are recorded only between measure start and the drain.
    var measuring = false
    var measured = false
    var timers = TimerHeap()
    var dirty: [Int] = []
    /// Per panel: (stream, message) not yet handed to that panel's checker.
    var checkBatches: [[(Int, WireMessage)]]
    /// PRESSED read before its presser's GRANTED was: (panel, fence, read at).
    var pendingPresses: [(Int, Int64, UInt64)] = []
    var nextToConnect = 0
    /// Slots of peers whose node went away, to connect again to another (`--hosts`).
    var reconnects: [Int] = []
    var settingUp = 0
    var presserSlots: [Int] = []
    /// buzz: the host's slot on the engine that has it, else -1.
    var hostSlot = -1
    var reportedDrained = false
    var reportedFinished = false
    var finalPending = 0
    /// Time of the poll being handled; one clock read serves all its reads' messages.
    var now: UInt64 = 0
    /// contend: when the read being handled returned, for the overlap check. Taken
    /// after each read, not per poll: a reply that arrived after the poll returned is
    /// still in hand only once its read returns.
    var readAt: UInt64 = 0
    let stampsReads: Bool
    var lastProgress: UInt64 = 0
    var progressReplies = 0
    var progressInterval = LatencyHistogram()

    init(index: Int, plan: RunPlan) {
        self.index = index
        self.plan = plan
        checkBatches = Array(repeating: [], count: plan.panels.count)
        stampsReads = plan.overlap != nil
    }

    func add(id: Int, role: PeerRole, transport: PeerTransport) -> Peer {
        let peer = Peer(id: id, slot: peers.count, role: role, transport: transport, seed: plan.options.seed)
        peers.append(peer)
        // Players and the host also take part in draining: a run ends once they are idle.
        if role == .presser || role == .player || role == .host { presserSlots.append(peer.slot) }
        if role == .host { hostSlot = peer.slot }
        return peer
    }

    /// The thread's body: returns when the run is done or aborted.
    func run() {
        do {
            epoll = try EpollSet(readBufferBytes: 64 * 1024)
        } catch {
            return control.abort("epoll_create1 failed: errno \(error.errno)")
        }
        adoptPreconnected()
        var entered: RunPhase?
        while true {
            let phase = control.phase
            now = LoadClock.now()
            if phase != entered {
                enter(phase)
                entered = phase
            }
            if phase == .done || phase == .aborted { break }
            advance(phase)
            fireTimers()
            resolvePendingPresses()
            // Everything queued this turn (by a phase change, a timer or the last
            // poll's replies) is written before the next wait, never after it.
            flushDirty()
            flushChecker()
            publishProgress()
            poll()
        }
        for peer in peers where peer.fd >= 0 { close(peer) }
        flushChecker()
    }

    /// Actions taken once when a phase begins.
    private func enter(_ phase: RunPhase) {
        switch phase {
        case .connecting:
            break
        case .running:
            for slot in presserSlots { start(peers[slot]) }
        case .draining:
            measuring = false
            for slot in presserSlots { peers[slot].role == .host ? drainHost(peers[slot]) : drain(peers[slot]) }
        case .finalJoin:
            finalPending = 0
            for peer in peers where peer.joins && peer.stream >= 0 && peer.state == .ready {
                peer.state = .finalJoin
                finalPending += 1
                sendJoin(peer)
            }
        case .done, .aborted:
            break
        }
    }

    /// Checks that move the run on.
    private func advance(_ phase: RunPhase) {
        switch phase {
        case .connecting:
            connectMore()
            if control.readyPeers.load(ordering: .relaxed) >= control.totalPeers {
                control.advance(from: .connecting, to: .running)
            }
        case .running:
            if !reconnects.isEmpty { connectMore() }
            if hostSlot >= 0 { hostTurn(peers[hostSlot]) }
            if !measured, now >= control.measureStart.load(ordering: .acquiring) {
                // Warm-up over: forget what was counted so far, except errors.
                measured = true
                measuring = true
                control.sampleCPU(into: control.cpuAtStart)
                var fresh = RunStats()
                fresh.errors = stats.errors
                fresh.errorSamples = stats.errorSamples
                stats = fresh
            }
            if now >= control.runDeadline.load(ordering: .relaxed) {
                control.advance(from: .running, to: .draining)
            }
        case .draining:
            guard !reportedDrained, presserSlots.allSatisfy({ peers[$0].step == .idle }) else { return }
            reportedDrained = true
            if control.drainedEngines.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue == control.engineCount {
                control.advance(from: .draining, to: .finalJoin)
            }
        case .finalJoin:
            guard !reportedFinished, finalPending == 0 else { return }
            reportedFinished = true
            if control.finishedEngines.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue == control.engineCount {
                control.advance(from: .finalJoin, to: .done)
            }
        case .done, .aborted:
            break
        }
    }

    private func poll() {
        var timeout: Int32 = 20
        if let next = timers.nextDeadline {
            timeout = next <= now ? 0 : Int32(min(20, (next - now) / LoadClock.millisecond))
        }
        guard let epoll else { return }
        let n = epoll.wait(timeoutMs: timeout)
        guard n > 0 else { return }
        now = LoadClock.now()
        for i in 0..<n {
            let (data, events) = epoll.ready(i)
            let slot = Int(data)
            guard slot < peers.count else { continue }
            let peer = peers[slot]
            if events & cs_EPOLLOUT != 0 {
                if peer.state == .connecting { connected(peer) } else { writable(peer) }
            }
            if peer.fd >= 0, events & (cs_EPOLLIN | cs_EPOLLHUP | cs_EPOLLERR | cs_EPOLLRDHUP) != 0 {
                readable(peer)
            }
        }
    }

    private func fireTimers() {
        guard !timers.isEmpty else { return }
        now = LoadClock.now()
        // Bounded by the heap's size: each turn removes one entry.
        while let entry = timers.popDue(now) {
            let peer = peers[Int(entry.slot)]
            guard entry.generation == peer.timerGeneration else { continue }
            timerFired(peer)
        }
    }

    func schedule(_ peer: Peer, afterNanos delay: UInt64) {
        peer.timerGeneration &+= 1
        timers.push(TimerHeap.Entry(deadline: now + delay, slot: Int32(peer.slot), generation: peer.timerGeneration))
    }

    /// Tells the checker of `peer`'s panel something about its connection, after what the
    /// connection has read so far (batched records go first). Nil without a checker.
    @discardableResult
    func tellChecker<T: Sendable>(of peer: Peer, _ body: (SafetyChecker) -> T) -> T? {
        flushChecker()
        return plan.panels[peer.panel].checker?.withLock { checker in body(checker) }
    }

    func flushChecker() {
        for p in checkBatches.indices where !checkBatches[p].isEmpty {
            let batch = checkBatches[p]
            plan.panels[p].checker?.withLock { c in
                for (stream, m) in batch { c.record(stream, m) }
            }
            checkBatches[p].removeAll(keepingCapacity: true)
        }
    }

    private func publishProgress() {
        guard control.showsProgress, now &- lastProgress >= 250 * LoadClock.millisecond else { return }
        lastProgress = now
        let replies = stats.replies
        let events = stats.events
        let errors = stats.errors
        let interval = progressInterval
        progressInterval = LatencyHistogram()
        control.progress.withLock { slots in
            slots[index].replies = replies
            slots[index].events = events
            slots[index].errors = errors
            slots[index].interval.merge(interval)
        }
    }
}
