import CSystem
import Dispatch
import Glibc

/// Reads sockets for a share of the channels: epoll, accept, the read buffer, flushing
/// and EPOLLOUT, closing in one place, and the sweep for missed wake-ups.
///
/// One DispatchSource watches an epoll descriptor, and each wake-up drains the ready
/// sockets in batches: a source per socket would cost several system calls and thread
/// hand-offs per request. What the bytes mean is a subclass's: it overrides the hooks
/// below (ArbiterServer's `Reactor`), each a vtable call. Everything not marked
/// otherwise is owned by `queue`; hot properties are `@exclusivity(unchecked)`: only
/// `queue` touches them.
open class EventLoop: @unchecked Sendable {
    package final let index: Int
    public final let queue: DispatchQueue
    /// The epoll descriptor, its ready list and the read buffer.
    package final let epoll: EpollSet
    /// `epoll.fd`, kept here for the channels' `epoll_ctl` from any thread.
    package final let epfd: Int32
    /// SO_SNDBUF for every socket registered (nil: the system's default).
    private let sendBufferBytes: Int32?
    var source: DispatchSourceRead?
    private var sweepTimer: DispatchSourceTimer?
    @exclusivity(unchecked) package final private(set) var slots: [Channel?] = []
    @exclusivity(unchecked) private var freeSlots: [Int] = []
    static let listenerData = UInt64.max
    private var listenerFD: Int32 = -1
    /// The clock read after each read(2) that returned bytes (nanoseconds, as
    /// `batchTime` gives it), and once per epoll batch for whatever else the batch
    /// does. Not once per batch for reads too: bytes that arrive while earlier sockets
    /// of the batch are being handled would be stamped before they arrived, and a hold
    /// timed from that stamp fires early. Read through `batchNanos`.
    @exclusivity(unchecked) @usableFromInline final var batchStamp: Int64 = 0
    /// When the bytes of the current read arrived, on `batchStamp`'s clock: the kernel's
    /// receive stamp moved onto it where sockets are stamped (`stampsArrivals`), else the
    /// read time. Read through `arrivalNanos`.
    @exclusivity(unchecked) @usableFromInline final var arrivalStamp: Int64 = 0
    /// Whether accepted sockets are stamped by the kernel and read with `recvmsg`: a
    /// buzzer round ranks by arrival. Off, every read costs what it did.
    public final let stampsArrivals: Bool
    /// CLOCK_REALTIME minus CLOCK_MONOTONIC, sampled at most once a millisecond, at a
    /// batch's start (`ArrivalStamp`): it moves only when the wall clock is set.
    @exclusivity(unchecked) final var realtimeOffset: Int64 = 0
    @exclusivity(unchecked) private var offsetSampledAt: Int64 = 0
    /// Where the arrivals of stamped reads came from (/metrics reads them).
    package final let arrivalCounts = ArrivalCounts()
    /// Where this loop says how far it has read (`ReadWatermark`), with the other loops.
    package final let readWatermark: ReadWatermark?
    /// How long an idle reactor looks before it blocks (`IdleSpin`).
    @exclusivity(unchecked) var idleSpin: IdleSpin
    /// When the epoll descriptor's source last ran (monotonic nanoseconds).
    @exclusivity(unchecked) var drainedAt: Int64 = 0
    /// Closes asked for on `queue` itself (a reply written, then close): done right after
    /// the round's writes rather than after the loop goes quiet, so peers see the FIN
    /// at once.
    @exclusivity(unchecked) private var closesRequested: [(Channel, String)] = []
    private static let queueKey = DispatchSpecificKey<Int>()
    /// Marks `queue` as this loop's (several servers share a process in tests).
    private var queueTag: Int { Int(bitPattern: Unmanaged.passUnretained(self).toOpaque()) }

    /// Public for the same reason as `Channel.init`.
    public init(
        index: Int, label: String, sendBufferBytes: Int32?, idleSpinNs: Int64 = 0, stampsArrivals: Bool = false,
        readWatermark: ReadWatermark? = nil
    ) throws(Sys.Failure) {
        self.index = index
        self.stampsArrivals = stampsArrivals
        self.readWatermark = readWatermark
        if stampsArrivals { realtimeOffset = ArrivalStamp.initialRealtimeOffset() }
        self.idleSpin = IdleSpin(maxNs: idleSpinNs)
        self.queue = DispatchQueue(label: label)
        self.sendBufferBytes = sendBufferBytes
        let epoll = try EpollSet()
        self.epoll = epoll
        self.epfd = epoll.fd
        if let mark = readWatermark?.marks[index] { epoll.add(mark.kickFD, events: cs_EPOLLIN, data: ReadMark.epollData) }
    }

    // MARK: Hooks: what the subclass decides. Each runs on `queue`.

    /// An accepted socket (non-blocking); the subclass makes its channel and `register`s
    /// it here or on another loop. By default it is closed.
    open func accepted(fd: Int32, peer: String) { Sys.close(fd) }

    /// Bytes arrived on `channel`, valid during the call only.
    open func received(_ bytes: UnsafeBufferPointer<UInt8>, on channel: Channel, flush: inout FlushList) {}

    /// The end of a batch of ready sockets, before its flush: work deferred to batch
    /// ends runs here.
    open func batchEnded(flush: inout FlushList) {}

    /// `channel` is about to close; false when it already has (nothing more happens).
    open func closing(_ channel: Channel) -> Bool { true }

    /// `channel` is closed: out of the table, its descriptor closed, its output gone.
    open func closed(_ channel: Channel, reason: String) {}

    /// `channel` took its place in the table (and epoll, unless embedded).
    open func registered(_ channel: Channel) {}

    /// Once a second, after the check for missed wake-ups: per-channel timeouts.
    open func swept() {}

    /// EPOLLOUT came and `channel` wrote what it could: a connect finished, or output left.
    open func wrote(_ channel: Channel) {}

    /// The time a read (or a batch) is stamped with, given the monotonic clock's nanoseconds
    /// (a subclass may read a clock of its own; tests use a manual one).
    open func batchTime(givenSystem nanoseconds: Int64) -> Int64 { nanoseconds }

    /// A problem worth a warning (accept or epoll_ctl failed, a wake-up was missed).
    open func trouble(_ event: LoopTrouble) {}

    /// Whether output made under `epoch` (`Channel.outputEpoch`) may still be written:
    /// the owner numbers the conditions its output holds under and says no once one
    /// ended. Any thread, under the channel's lock, so it takes no lock that is held while
    /// appending. By default always.
    /// `markedAtMs` (monotonic ms; 0: none) is when output with a time limit was made;
    /// passed on the first write that tries it.
    open func outputStands(epoch: UInt64, markedAtMs: Int64) -> Bool { true }

    /// Why a channel whose output no longer stood is closed (its log line).
    open var staleOutputReason: String { "output made under an epoch that ended was dropped unsent" }

    // MARK: Queue

    /// The time the current read (or, outside reads, the current batch) was stamped
    /// with: never before the bytes being handled arrived. On `queue`.
    ///
    /// An inlinable getter rather than a public stored property: `@exclusivity(unchecked)`
    /// only holds for accesses compiled in this module, and every other module's access
    /// to a class's stored property pays the runtime check (measured: about 180
    /// instructions per DOWN/UP for this and `Channel.output`).
    @inlinable public final var batchNanos: Int64 { batchStamp }

    /// When the bytes being handled arrived, on `batchNanos`'s clock (`arrivalStamp`).
    @inlinable public final var arrivalNanos: Int64 { arrivalStamp }

    /// Whether the caller runs on `queue`.
    package final var isCurrent: Bool { DispatchQueue.getSpecific(key: EventLoop.queueKey) == queueTag }

    /// Traps in a debug build when the caller is not on `queue`; compiled out of release
    /// builds, where it would cost on the press path.
    @inlinable @inline(__always) public final func assertOnQueue() {
        #if DEBUG
            dispatchPrecondition(condition: .onQueue(queue))
        #endif
    }

    /// Marks `queue` as this loop's, so `isCurrent` can tell.
    package final func markQueue() {
        queue.setSpecific(key: EventLoop.queueKey, value: queueTag)
    }

    /// Starts watching: the epoll descriptor's source and the sweep.
    open func start() {
        markQueue()
        let source = DispatchSource.makeReadSource(fileDescriptor: epfd, queue: queue)
        source.setEventHandler { [unowned self] in self.drainReadyEvents() }
        source.resume()
        self.source = source
        let sweep = DispatchSource.makeTimerSource(queue: queue)
        sweep.setEventHandler { [unowned self] in self.sweep() }
        sweep.schedule(deadline: .now() + .seconds(1), repeating: .seconds(1), leeway: .milliseconds(100))
        sweep.resume()
        self.sweepTimer = sweep
    }

    /// Stops watching and closes every channel; called on `queue` during shutdown.
    open func stop() {
        assertOnQueue()
        source?.cancel()
        sweepTimer?.cancel()
        source = nil
        sweepTimer = nil
        for case let channel? in slots { close(channel, reason: "server stopped") }
        stopListening()
    }

    /// Watches the listening socket: its connections are accepted on this loop.
    package final func watchListener(_ fd: Int32) {
        listenerFD = fd
        // Accepted sockets inherit it, and the kernel, which turns its stamping on some
        // time after the first socket asks (and off after the last one goes), has it on
        // before any client's first bytes: else those came unstamped.
        if stampsArrivals { _ = cs_enable_rx_timestamps(fd) }
        epoll.add(fd, events: cs_EPOLLIN, data: EventLoop.listenerData)
    }

    /// Closes the listening socket: no new connections. On `queue`.
    package final func stopListening() {
        assertOnQueue()
        guard listenerFD >= 0 else { return }
        epoll.remove(listenerFD)
        Sys.close(listenerFD)
        listenerFD = -1
    }

    package final var channelCount: Int { slots.count - freeSlots.count }

    // MARK: Embedded (tests): what an epoll wake-up or a timer would do, driven by hand

    /// Stops (or restarts) the epoll descriptor's source, as a lost wake-up would: for
    /// the test of the sweep's safety net. On `queue`.
    package final func suspendSourceForTesting(_ suspended: Bool) {
        if suspended { source?.suspend() } else { source?.resume() }
    }

    // MARK: Events

    /// Runs like an event loop while there is work: after a batch it waits in
    /// epoll_wait for the next one (up to 1 ms) instead of going back to Dispatch, whose
    /// wake-up costs a second epoll_wait and a thread hand-off per readiness. It
    /// returns when sockets stay quiet for 1 ms, or after 5 ms of work so that timers
    /// and other blocks on this queue get their turn.
    func drainReadyEvents() {
        assertOnQueue()
        var flush = FlushList()
        let started = SystemClock.monotonic.nanoseconds()
        drainedAt = started
        var timeout: Int32 = 0
        for _ in 0..<1_000_000 {
            let lookedAt = readWatermark == nil ? 0 : batchTime(givenSystem: SystemClock.monotonic.nanoseconds())
            let n = timeout > 0 ? idleWait(timeoutMs: timeout) : epoll.wait(timeoutMs: 0)
            let real = SystemClock.monotonic.nanoseconds()
            batchStamp = batchTime(givenSystem: real)
            arrivalStamp = batchStamp
            if n <= 0 {
                readWatermark?.loop(index, readThrough: lookedAt)
                if timeout > 0 { break }
                timeout = 1
                continue
            }
            // Straight to the 1 ms wait after a batch: a wait that returns at once when
            // sockets are ready, instead of a wait(0) that finds them quiet and a second
            // call that waits (one system call less per request answered).
            timeout = 1
            if stampsArrivals, real &- offsetSampledAt >= 1_000_000 {
                realtimeOffset = ArrivalStamp.realtimeOffset(previous: realtimeOffset)
                offsetSampledAt = real
            }
            var drained = true
            for i in 0..<n {
                let (data, events) = epoll.ready(i)
                if data >= ReadMark.epollData {
                    if data == EventLoop.listenerData { drained = acceptConnections() && drained } else { tookKick(&timeout) }
                    continue
                }
                let slot = Int(UInt32(truncatingIfNeeded: data))
                guard slot < slots.count, let channel = slots[slot], channel.epollData == data else { continue }
                if events & cs_EPOLLOUT != 0 {
                    flush.handle(channel.writable(), of: channel)
                    wrote(channel)
                }
                if events & (cs_EPOLLIN | cs_EPOLLRDHUP | cs_EPOLLHUP | cs_EPOLLERR) != 0 {
                    drained = readable(channel, flush: &flush) && drained
                }
            }
            batchEnded(flush: &flush)
            flush.flushAll()
            closeRequested()
            if drained, n < Int(EpollSet.batch) { readWatermark?.loop(index, readThrough: lookedAt) }
            // Not before the look a kick taken in this batch is owed: nothing would ask again.
            if real - started > 5_000_000, timeout > 0 { break }
        }
        flush.flushAll()
        closeRequested()
    }

    /// False when connections may be left waiting (`ReadWatermark`: their bytes are unread).
    private func acceptConnections() -> Bool {
        for _ in 0..<64 {
            switch Sys.accept(listenerFD) {
            case .accepted(let fd, let peer):
                readWatermark?.handingOff()
                accepted(fd: fd, peer: peer)
            case .wouldBlock:
                return true
            case .failed(let e):
                // Out of descriptors: stop watching the listener for a moment, or the
                // level-triggered readiness would spin.
                trouble(.acceptFailed(errno: e))
                epoll.remove(listenerFD)
                queue.asyncAfter(deadline: .now() + .milliseconds(100)) { [self] in
                    if listenerFD >= 0 { epoll.add(listenerFD, events: cs_EPOLLIN, data: EventLoop.listenerData) }
                }
                return false
            }
        }
        return false
    }

    /// Takes a new channel into this loop's table and epoll. On `queue`.
    package final func register(_ channel: Channel) {
        assertOnQueue()
        readWatermark?.takingIn(index, at: batchTime(givenSystem: SystemClock.monotonic.nanoseconds()))
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            slots[slot] = channel
        } else {
            slot = slots.count
            slots.append(channel)
        }
        channel.slot = slot
        if channel.sink != nil {
            // Embedded (tests): no descriptor to watch; bytes are delivered by hand.
            registered(channel)
            return
        }
        if let size = sendBufferBytes {
            Sys.setOption(channel.fd, SOL_SOCKET, SO_SNDBUF, size)
        }
        if stampsArrivals { _ = cs_enable_rx_timestamps(channel.fd) }
        let err = epoll.add(channel.fd, events: cs_EPOLLIN | cs_EPOLLRDHUP, data: channel.epollData)
        if err != 0 {
            trouble(.registrationFailed(errno: err))
            close(channel, reason: "epoll")
            return
        }
        registered(channel)
    }

    /// Closes the socket, once: while it is still in the table, the subclass agrees
    /// (`closing`), the output stops and the descriptor closes under the channel's lock,
    /// the slot is freed, and the subclass is told (`closed`). On `queue`; other queues
    /// use `requestClose`.
    package final func close(_ channel: Channel, reason: String) {
        assertOnQueue()
        guard holds(channel), closing(channel) else { return }
        channel.withLock {
            channel.shut(.closed)
            // Under the lock, so no writer can use the descriptor number once reused.
            Sys.close(channel.fd)
        }
        release(channel)
        closed(channel, reason: reason)
    }

    /// Takes the channel out of epoll and the table without closing its descriptor,
    /// which is the caller's from now on; no writer may use it. On `queue`.
    package final func detach(_ channel: Channel) {
        assertOnQueue()
        if channel.sink == nil { epoll.remove(channel.fd) }
        channel.withLock { channel.shut(.closed) }
        release(channel)
    }

    /// Whether `channel` is in this loop's table (registered, not yet closed or detached).
    package final func holds(_ channel: Channel) -> Bool {
        channel.slot >= 0 && channel.slot < slots.count && slots[channel.slot] === channel
    }

    private func release(_ channel: Channel) {
        if holds(channel) {
            slots[channel.slot] = nil
            freeSlots.append(channel.slot)
        }
    }

    /// `close`, from any queue: on `queue` itself it waits for the end of the round.
    package final func requestClose(_ channel: Channel, reason: String) {
        guard isCurrent else {
            queue.async { self.close(channel, reason: reason) }
            return
        }
        closesRequested.append((channel, reason))
        // Timers and other blocks on `queue` flush too; this catches their closes.
        if closesRequested.count == 1 { queue.async { self.closeRequested() } }
    }

    /// Carries out the closes asked for on `queue`. On `queue`; inlined in the loop,
    /// which asks after every batch.
    @inline(__always) package final func closeRequested() {
        if !closesRequested.isEmpty { closeAllRequested() }
    }

    private func closeAllRequested() {
        let batch = closesRequested
        closesRequested.removeAll(keepingCapacity: true)
        for (channel, reason) in batch { close(channel, reason: reason) }
    }
}
