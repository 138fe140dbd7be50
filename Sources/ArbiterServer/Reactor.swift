import ArbiterCore
import ArbiterIO
import ArbiterWire
import CSystem
import Dispatch
import Glibc
import Synchronization

/// Reads sockets for a share of the connections.
///
/// One DispatchSource watches an epoll descriptor, and each wake-up drains the ready
/// sockets in batches: a source per socket would cost several system calls and thread
/// hand-offs per request. Everything not marked otherwise is owned by `queue`.
/// Hot properties are `@exclusivity(unchecked)`: only `queue` touches them.
final class Reactor: @unchecked Sendable {
    let index: Int
    let queue: DispatchQueue
    /// The epoll descriptor, its ready list and the read buffer (ArbiterIO).
    let epoll: EpollSet
    /// `epoll.fd`, kept here for the connections' `epoll_ctl` from any thread.
    let epfd: Int32
    /// The server owns its reactors; this way back is `unowned` (checked, not `unsafe`).
    unowned let server: ServerState
    /// Runs the commands of this reactor's connections.
    let runner: SessionRunner
    private var source: DispatchSourceRead?
    private var timer: DispatchSourceTimer?
    private var sweepTimer: DispatchSourceTimer?
    @exclusivity(unchecked) private var timerDeadline: Instant?
    @exclusivity(unchecked) private var slots: [Connection?] = []
    @exclusivity(unchecked) private var freeSlots: [Int] = []
    /// Connections waiting for their WELCOME deadline, in accept order.
    @exclusivity(unchecked) private var greetings: [(deadline: Instant, connection: Connection)] = []
    @exclusivity(unchecked) private var greetingsHead = 0
    static let listenerData = UInt64.max
    private var listenerFD: Int32 = -1
    /// The clock read once per epoll batch (monotonic nanoseconds): every read of the
    /// batch is stamped with it.
    @exclusivity(unchecked) private(set) var batchNanos: Int64 = 0
    /// When the epoll descriptor's source last ran (monotonic nanoseconds).
    @exclusivity(unchecked) private var drainedAt: Int64 = 0
    /// Commands decoded from one read, reused so a read allocates nothing.
    @exclusivity(unchecked) var jobs: [Job] = []
    /// Press commands of this round waiting for one visit to their panel.
    @exclusivity(unchecked) var deferred: [(Connection, Press<Int>, receivedAt: Int64)] = []
    @exclusivity(unchecked) var deferredPanel: Int?
    /// Closes asked for on `queue` itself (a reply written, then close): done right after
    /// the round's writes rather than after the loop goes quiet, so peers see the FIN
    /// at once.
    @exclusivity(unchecked) private var closesRequested: [(Connection, String)] = []
    private static let queueKey = DispatchSpecificKey<Int>()
    /// Marks `queue` as this reactor's (several servers share a process in tests).
    private var queueTag: Int { Int(bitPattern: Unmanaged.passUnretained(self).toOpaque()) }
    /// Whether the caller runs on `queue`.
    var isCurrent: Bool { DispatchQueue.getSpecific(key: Reactor.queueKey) == queueTag }

    init(index: Int, server: ServerState) throws(Sys.Failure) {
        self.index = index
        self.server = server
        self.runner = SessionRunner(server: server)
        self.queue = DispatchQueue(label: "arbiter.reactor.\(index)")
        let epoll = try EpollSet()
        self.epoll = epoll
        self.epfd = epoll.fd
    }

    func start() {
        markQueue()
        let source = DispatchSource.makeReadSource(fileDescriptor: epfd, queue: queue)
        source.setEventHandler { [unowned self] in self.drainReadyEvents() }
        source.resume()
        self.source = source
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [unowned self] in self.timerFired() }
        timer.resume()
        self.timer = timer
        let sweep = DispatchSource.makeTimerSource(queue: queue)
        sweep.setEventHandler { [unowned self] in self.sweep() }
        sweep.schedule(deadline: .now() + .seconds(1), repeating: .seconds(1), leeway: .milliseconds(100))
        sweep.resume()
        self.sweepTimer = sweep
    }

    /// Traps in a debug build when the caller is not on `queue`; compiled out of release
    /// builds, where it would cost on the press path.
    @inline(__always) func assertOnQueue() {
        #if DEBUG
            dispatchPrecondition(condition: .onQueue(queue))
        #endif
    }

    /// Marks `queue` as this reactor's, so `isCurrent` can tell.
    func markQueue() {
        queue.setSpecific(key: Reactor.queueKey, value: queueTag)
    }

    // MARK: Embedded (tests): what an epoll wake-up or a timer would do, driven by hand

    /// One read of `bytes` on `connection`, handled as `drainReadyEvents` handles one.
    /// On `queue`.
    func deliverForTesting(_ bytes: [UInt8], to connection: Connection) {
        assertOnQueue()
        batchNanos = server.clock.reading(givenSystem: Sys.monotonicNanoseconds())
        var flush = FlushList()
        bytes.withUnsafeBufferPointer { received($0, on: connection, flush: &flush) }
        runDeferredPresses(flush: &flush)
        flush.flushAll()
        closeRequested()
    }

    /// The WELCOME timer and the sweep, at the clock's time. On `queue`.
    func tickForTesting() {
        assertOnQueue()
        timerFired()
        sweep()
        closeRequested()
    }

    /// Stops (or restarts) the epoll descriptor's source, as a lost wake-up would: for
    /// the test of the sweep's safety net. On `queue`.
    func suspendSourceForTesting(_ suspended: Bool) {
        if suspended { source?.suspend() } else { source?.resume() }
    }

    /// Stops watching; called on `queue` during shutdown.
    func stop() {
        assertOnQueue()
        source?.cancel()
        timer?.cancel()
        sweepTimer?.cancel()
        source = nil
        timer = nil
        sweepTimer = nil
        for case let connection? in slots { close(connection, reason: "server stopped") }
        // Connections point at their reactor; drop every reference back to them.
        greetings.removeAll()
        greetingsHead = 0
        stopListening()
    }

    /// Closes the listening socket: no new connections. On `queue`.
    func stopListening() {
        assertOnQueue()
        guard listenerFD >= 0 else { return }
        epoll.remove(listenerFD)
        Sys.close(listenerFD)
        listenerFD = -1
    }

    /// The last words of a shutdown: line peers get `OK BYE reason=shutdown`, WebSockets
    /// a close 1001; each closes once that is written. Others close now. On `queue`.
    func sayGoodbye() {
        assertOnQueue()
        var flush = FlushList()
        for case let connection? in slots {
            perform(connection.machine.shutdown(), nil, on: connection, flush: &flush)
        }
        flush.flushAll()
    }

    func watchListener(_ fd: Int32) {
        listenerFD = fd
        epoll.add(fd, events: cs_EPOLLIN, data: Reactor.listenerData)
    }

    var connectionCount: Int { slots.count - freeSlots.count }

    // MARK: Events

    /// Runs like an event loop while there is work: after a batch it waits in
    /// epoll_wait for the next one (up to 1 ms) instead of going back to Dispatch, whose
    /// wake-up costs a second epoll_wait and a thread hand-off per readiness. It
    /// returns when sockets stay quiet for 1 ms, or after 5 ms of work so that timers
    /// and other blocks on this queue get their turn.
    private func drainReadyEvents() {
        assertOnQueue()
        var flush = FlushList()
        let started = Sys.monotonicNanoseconds()
        drainedAt = started
        var timeout: Int32 = 0
        for _ in 0..<1_000_000 {
            let n = epoll.wait(timeoutMs: timeout)
            let real = Sys.monotonicNanoseconds()
            batchNanos = server.clock.reading(givenSystem: real)
            if n <= 0 {
                if timeout > 0 { break }
                timeout = 1
                continue
            }
            timeout = 0
            for i in 0..<n {
                let (data, events) = epoll.ready(i)
                if data == Reactor.listenerData {
                    acceptConnections()
                    continue
                }
                let slot = Int(UInt32(truncatingIfNeeded: data))
                guard slot < slots.count, let connection = slots[slot], connection.epollData == data else { continue }
                if events & cs_EPOLLOUT != 0 {
                    flush.handle(connection.writable(), of: connection)
                }
                if events & (cs_EPOLLIN | cs_EPOLLRDHUP | cs_EPOLLHUP | cs_EPOLLERR) != 0 {
                    readable(connection, flush: &flush)
                }
            }
            runDeferredPresses(flush: &flush)
            flush.flushAll()
            closeRequested()
            if real - started > 5_000_000 { break }
        }
        flush.flushAll()
        closeRequested()
    }

    private func acceptConnections() {
        for _ in 0..<64 {
            switch Sys.accept(listenerFD) {
            case .accepted(let fd, let peer):
                server.adopt(fd: fd, peer: peer)
            case .wouldBlock:
                return
            case .failed(let e):
                // Out of descriptors: stop watching the listener for a moment, or the
                // level-triggered readiness would spin.
                server.log.warning("accept failed; pausing accepts for 100 ms", ["errno": "\(e)"])
                epoll.remove(listenerFD)
                queue.asyncAfter(deadline: .now() + .milliseconds(100)) { [self] in
                    if listenerFD >= 0 { epoll.add(listenerFD, events: cs_EPOLLIN, data: Reactor.listenerData) }
                }
                return
            }
        }
    }

    /// Takes a new connection into this reactor's table. On `queue`.
    func register(_ connection: Connection) {
        assertOnQueue()
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            slots[slot] = connection
        } else {
            slot = slots.count
            slots.append(connection)
        }
        connection.slot = slot
        if connection.sink != nil {
            // Embedded (tests): no descriptor to watch; bytes are delivered by hand.
            greetings.append((connection.acceptedAt + server.configuration.welcomeDelayMs, connection))
            return
        }
        if let size = server.configuration.socketSendBufferBytes {
            Sys.setOption(connection.fd, SOL_SOCKET, SO_SNDBUF, size)
        }
        let err = epoll.add(connection.fd, events: cs_EPOLLIN | cs_EPOLLRDHUP, data: connection.epollData)
        if err != 0 {
            server.log.warning("epoll_ctl failed", ["errno": "\(err)"])
            close(connection, reason: "epoll")
            return
        }
        greetings.append((connection.acceptedAt + server.configuration.welcomeDelayMs, connection))
        scheduleTimer()
    }

    private func readable(_ connection: Connection, flush: inout FlushList) {
        switch epoll.read(connection.fd) {
        case .bytes(let bytes):
            received(bytes, on: connection, flush: &flush)
        case .wouldBlock:
            return
        case .eof:
            close(connection, reason: "eof")
        case .failed(let e):
            close(connection, reason: "errno \(e)")
        }
    }

    /// Closes the socket and starts the release of everything the session owned.
    /// On `queue`; other queues use `requestClose`.
    func close(_ connection: Connection, reason: String) {
        assertOnQueue()
        // A press read before the close must not be granted after its release.
        var pending = FlushList()
        runDeferredPresses(flush: &pending)
        pending.flushAll()
        guard connection.machine.socketClosed() else { return }
        connection.shared.withLock { s in
            s.gate = .closed
            s.output.discard()
            _ = connection.outputBudget.account(&s)
            // Under the lock, so no writer can use the descriptor number once reused.
            Sys.close(connection.fd)
        }
        if connection.slot >= 0, connection.slot < slots.count, slots[connection.slot] === connection {
            slots[connection.slot] = nil
            freeSlots.append(connection.slot)
        }
        server.connectionClosed(connection, reason: reason)
        var flush = FlushList()
        runner.disconnect(connection, flush: &flush)
        flush.flushAll()
    }

    /// Gives a relay link's socket to the relay network (the machine chose `handOff`):
    /// the descriptor leaves epoll and the table but stays open, and the connection
    /// stops counting as a client. Nothing was written to it. On `queue`.
    func handOff(_ connection: Connection, firstBytes: [UInt8]) {
        assertOnQueue()
        guard let adopt = server.configuration.relayHandOff else { return }
        if connection.sink == nil { epoll.remove(connection.fd) }
        connection.shared.withLock { s in
            // No writer may use the descriptor from now on: it is the relay's.
            s.gate = .closed
            s.output.discard()
            _ = connection.outputBudget.account(&s)
        }
        if connection.slot >= 0, connection.slot < slots.count, slots[connection.slot] === connection {
            slots[connection.slot] = nil
            freeSlots.append(connection.slot)
        }
        server.registry.withLock { _ = $0.removeValue(forKey: connection.session) }
        server.names.release(connection.name, of: connection.session)
        server.metrics.add(.connectionsClosed)
        server.log.info("connection handed to the relay", ["session": connection.session.description, "peer": connection.peer])
        adopt(connection.fd, connection.peer, firstBytes)
    }

    func requestClose(_ connection: Connection, reason: String) {
        guard isCurrent else {
            queue.async { self.close(connection, reason: reason) }
            return
        }
        closesRequested.append((connection, reason))
        // Timers and other blocks on `queue` flush too; this catches their closes.
        if closesRequested.count == 1 { queue.async { self.closeRequested() } }
    }

    private func closeRequested() {
        guard !closesRequested.isEmpty else { return }
        let batch = closesRequested
        closesRequested.removeAll(keepingCapacity: true)
        for (connection, reason) in batch { close(connection, reason: reason) }
    }

    // MARK: Timers

    private func timerFired() {
        assertOnQueue()
        let now = server.clock.now()
        var flush = FlushList()
        while greetingsHead < greetings.count, greetings[greetingsHead].deadline <= now {
            let connection = greetings[greetingsHead].connection
            greetingsHead += 1
            greetIfSilent(connection, flush: &flush)
        }
        if greetingsHead == greetings.count {
            greetings.removeAll(keepingCapacity: greetings.count < 1024)
            greetingsHead = 0
        }
        flush.flushAll()
        timerDeadline = nil
        scheduleTimer()
    }

    /// Once a second: heads that take too long, silent WebSockets to ping or drop.
    private func sweep() {
        assertOnQueue()
        // A safety net: sockets ready while the source has not run for half a second,
        // and still 50 ms later (a wake-up takes microseconds), mean a wake-up was missed
        // somewhere below us. Serve them, and say so, rather than leave peers waiting
        // for the next event.
        if isStale() {
            queue.asyncAfter(deadline: .now() + .milliseconds(50)) { [weak self] in
                guard let self, self.source != nil, self.isStale() else { return }
                self.server.log.warning("ready sockets found by the sweep: the reactor's wake-up was missed", ["reactor": "\(self.index)"])
                self.server.metrics.add(.missedWakeups)
                self.drainReadyEvents()
            }
        }
        let now = server.clock.now()
        var flush = FlushList()
        for case let connection? in slots {
            perform(connection.machine.sweep(now: now, lastReadAt: connection.lastReadAt), nil, on: connection, flush: &flush)
        }
        flush.flushAll()
    }

    /// Sockets are ready but the source has not run for half a second. On `queue`.
    private func isStale() -> Bool {
        Sys.monotonicNanoseconds() - drainedAt > 500_000_000 && epoll.hasReady()
    }

    private func scheduleTimer() {
        guard greetingsHead < greetings.count else { return }
        let deadline = greetings[greetingsHead].deadline
        if let current = timerDeadline, current <= deadline { return }
        timerDeadline = deadline
        timer?.schedule(
            deadline: .now() + .milliseconds(Int(max(0, deadline.since(server.clock.now())))),
            leeway: .milliseconds(5))
    }
}
