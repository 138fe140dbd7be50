import ArbiterCore
import ArbiterHooks
import ArbiterIO
import ArbiterJournal
import ArbiterWire
import Dispatch
import Synchronization

/// One panel's core and everything that serves it, owned by one serial queue.
///
/// The queue is what makes a panel's decisions a total order, and independent panels
/// run on different threads. Everything here belongs to `queue` unless marked.
/// Hot properties are `@exclusivity(unchecked)`: each is touched only on `queue`, which
/// already rules out overlapping access, and the runtime check cost more per command than
/// the arbitration itself.
package final class PanelHost: @unchecked Sendable {
    package let index: Int
    package let config: PanelConfig
    package let queue: DispatchQueue
    /// The ids as bytes, for the fast text encoding of replies and events.
    package let names: PanelNames
    /// Button ids to indexes; immutable, so reactors read it without the queue.
    package let buttonIndex: IDTable<Int>
    @exclusivity(unchecked) var core: PanelCore
    @exclusivity(unchecked) var members: [SessionID: Connection] = [:]
    /// Connections waiting in a queue group's line, for their hand-off GRANTED: a waiter
    /// need not be a member. Dropped at the hand-off, at DEQUEUED and at disconnect.
    @exclusivity(unchecked) var waiters: [SessionID: Connection] = [:]
    @exclusivity(unchecked) var output = PanelOutput()
    @exclusivity(unchecked) var deferredReplies = DeferredReplies()
    var timer: DispatchSourceTimer?
    /// The clock the core decides by (the server's).
    package let clock: any TimeSource
    @exclusivity(unchecked) var timerDeadline: Instant?
    /// Buzzer presses are ranked once the reactors have read through them; nil: when their
    /// window ends (no stamps, cluster mode, no fair groups).
    @exclusivity(unchecked) var readWait: ReadWait?
    @exclusivity(unchecked) var history = HistoryRing(capacity: Request.maxHistoryCount)
    /// Open connections by session (the server's registry), to reach a waiter that left
    /// this panel's table.
    package let sessions: Locked<[SessionID: Connection]>
    /// Whether any panel has keys at all: if none, every session is admin everywhere.
    private let hasKeys: Bool
    @exclusivity(unchecked) var counters = PanelCounters()
    /// Read by PANELS from any queue.
    package let memberCount = Atomic<Int>(0)

    private(set) var journal: Journal?
    /// Fences up to this one are durably reserved in the journal.
    private var reservedFence: UInt64 = 0
    /// Journal lines of one command's output, written before any of it is sent.
    @exclusivity(unchecked) var journalBuffer: [UInt8] = []
    /// Wall time read once per visit, for journal and history records.
    @exclusivity(unchecked) var wallReading: Int64?
    /// Where the panel's commands are decided and where its output goes beyond this
    /// node's connections (cluster mode, `PanelRole`); nil on a single node. Set once,
    /// before the panel starts, so one read per command decides which path it takes.
    @exclusivity(unchecked) package private(set) var role: (any PanelRole)?
    /// The panel's webhooks; nil without any, so a panel without hooks pays one test.
    /// Set before the panel starts.
    @exclusivity(unchecked) package var hooks: PanelHooks?

    init(
        index: Int, config: PanelConfig, lastFence: UInt64, reservedFence: UInt64 = 0, history: [HistoryRecord] = [], journal: Journal? = nil,
        clock: any TimeSource = SystemClock.monotonic, sessions: Locked<[SessionID: Connection]> = Locked([:]), hasKeys: Bool = true
    ) {
        self.clock = clock
        self.sessions = sessions
        self.hasKeys = hasKeys
        self.index = index
        self.config = config
        self.queue = DispatchQueue(label: "arbiter.panel.\(config.id)")
        self.names = PanelNames(config)
        self.buttonIndex = IDTable(config.buttons.enumerated().map { ($1.id, $0) })
        self.core = PanelCore(config: config, lastFence: lastFence, fenceFloor: reservedFence)
        self.journal = journal
        self.reservedFence = max(lastFence, reservedFence)
        for record in history.suffix(Request.maxHistoryCount) { self.history.append(.loaded(record)) }
    }

    // MARK: The panel's state as its role (another module) reaches it

    // Accessors compiled here, where `@exclusivity(unchecked)` holds: the role's module
    // reaching the stored properties itself paid the runtime's exclusivity check at each
    // access, and a plain getter copied the whole value (its buffers retained and released).
    package var roleCore: PanelCore {
        _read { yield core }
        _modify { yield &core }
    }
    package var roleMembers: [SessionID: Connection] {
        _read { yield members }
        _modify { yield &members }
    }
    package var roleWaiters: [SessionID: Connection] {
        _read { yield waiters }
        _modify { yield &waiters }
    }
    package var roleOutput: PanelOutput {
        _read { yield output }
        _modify { yield &output }
    }
    package var roleCounters: PanelCounters {
        _read { yield counters }
        _modify { yield &counters }
    }
    package var roleHistory: HistoryRing { _read { yield history } }

    /// Gives the panel its role (`ServerCluster.attach`).
    package func adopt(_ role: any PanelRole) {
        precondition(timer == nil, "a panel's role is set before it starts")
        self.role = role
    }

    /// Lets go of the role when the server stops (the role holds the panel too). On `queue`.
    package func dropRole() {
        assertOnQueue()
        role = nil
    }

    /// Starts the panel's timer source.
    func start(reads: ReadWatermark? = nil) {
        if let reads, role == nil, core.hasFairGroups { readWait = ReadWait(reads) }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [unowned self] in self.timerFired() }
        timer.resume()
        self.timer = timer
    }

    func stop() {
        timer?.cancel()
        timer = nil
    }

    /// Traps in a debug build when the caller is not on `queue`; compiled out of release
    /// builds, where it would cost on the press path.
    @inline(__always) package func assertOnQueue() {
        #if DEBUG
            dispatchPrecondition(condition: .onQueue(queue))
        #endif
    }

    /// The access a session presenting `key` has here.
    package func access(key: String?) -> Access {
        config.access(forKey: key, serverHasKeys: hasKeys)
    }

    // MARK: Commands

    /// Runs one command of `connection`. On `queue` (inside `queue.sync`).
    func execute(_ command: ParsedCommand, receivedAt: Int64, from connection: Connection, flush: inout FlushList) {
        assertOnQueue()
        if let role { return role.execute(command, receivedAt: receivedAt, from: connection, flush: &flush) }
        executeHere(command, receivedAt: receivedAt, session: connection.session, name: connection.name, key: connection.key, from: connection, flush: &flush)
    }

    /// Runs a command in this node's core: every command on a single node; in cluster
    /// mode, once this node is known to decide the panel. `connection` is nil for a
    /// session relayed from another node (`remoteRequester` says where its reply goes).
    package func executeHere(
        _ command: ParsedCommand, receivedAt: Int64, session: SessionID, name: String, key: String?, from connection: Connection?,
        flush: inout FlushList
    ) {
        counters.commands += 1
        // The command's time is when its bytes were read (the clock read after the read).
        let now = Instant(nanoseconds: receivedAt)
        let access = access(key: key)
        if case .history(_, let count) = command.request {
            return replyHistory(count, access: access, to: connection, command, flush: &flush)
        }
        let request: PanelRequest
        switch command.request {
        case .press(let press): request = resolve(press)
        case .join: request = .join
        case .leave: request = .leave
        case .reset: request = .reset
        case .arm(_, let group): request = .arm(group: group)
        case .ranking(_, let group): request = .ranking(group: group)
        case .hello, .help, .panels, .history, .ping, .quit, .kick: return
        }
        run(request, access: access, now: now, replyFormat: command.format, id: command.id, session: session, name: name, from: connection, flush: &flush)
    }

    /// The general path's one look-up of a button id (the fast path's is
    /// `ServerState.resolvePress`, from the line's bytes, in the same table).
    package func resolve(_ press: Press<String>) -> PanelRequest {
        guard let button = buttonIndex[press.button] else { return .unknownButton(press.verb, id: press.button) }
        return .press(press.resolved(panel: index, button: button))
    }

    /// Runs a press command whose ids the reactor already looked up. On `queue`.
    func executePress(_ press: Press<Int>, receivedAt: Int64, format: WireFormat, from connection: Connection, flush: inout FlushList) {
        assertOnQueue()
        if let role { return role.executePress(press, receivedAt: receivedAt, format: format, from: connection, flush: &flush) }
        counters.commands += 1
        let access = access(key: connection.key)
        run(
            .press(press), access: access, now: Instant(nanoseconds: receivedAt),
            replyFormat: format, id: nil, session: connection.session, name: connection.name, from: connection, flush: &flush)
    }

    package func run(
        _ request: PanelRequest, access: Access, now: Instant, replyFormat: WireFormat, id: CommandID?,
        session: SessionID, name: String, from connection: Connection?, flush: inout FlushList
    ) {
        if case .press(let press) = request, press.verb == .down {
            if let refusal = admitDown() {
                return refuse(refusal, to: connection, format: replyFormat, id: id, flush: &flush)
            }
            if let journal {
                return runUndoably(
                    request, journal: journal, access: access, now: now, replyFormat: replyFormat, id: id, session: session, name: name,
                    from: connection, flush: &flush)
            }
        }
        decide(request, access: access, now: now, session: session, name: name, from: connection)
        deliver(replyTo: connection, format: replyFormat, id: id, flush: &flush)
    }

    /// A DOWN with a journal: the core is kept so that a press whose records cannot be
    /// written is undone, unseen. Apart from `run`: a `PanelCore?` made ready there cost
    /// every press its zeroing, journal or not.
    @inline(never)
    private func runUndoably(
        _ request: PanelRequest, journal: Journal, access: Access, now: Instant, replyFormat: WireFormat, id: CommandID?,
        session: SessionID, name: String, from connection: Connection?, flush: inout FlushList
    ) {
        let before = core
        decide(request, access: access, now: now, session: session, name: name, from: connection)
        if !deliver(replyTo: connection, format: replyFormat, id: id, undoable: true, flush: &flush) {
            core = before
            journal.noteRefusal()
            refuse(unavailable(journal), to: connection, format: replyFormat, id: id, flush: &flush)
        }
    }

    @inline(__always)
    private func decide(_ request: PanelRequest, access: Access, now: Instant, session: SessionID, name: String, from connection: Connection?) {
        if core.hasFairGroups { reserveHandOffFences() }
        output.removeAll()
        // When its bytes arrived (a buzzer ranks by it), and who pressed (`Player`).
        let arrival = connection.map { Instant(nanoseconds: $0.arrivedAt) }
        let address = connection?.address ?? role?.requesterAddress ?? ""
        if let readWait { core.readThrough = readWait.readThrough }
        core.handle(request, session: session, name: name, access: access, now: now, arrival: arrival, address: address, into: &output)
    }

    /// Why a DOWN may not go ahead, or nil: the panel has no fence left, or the fence it
    /// may take cannot be reserved durably. Reserves the next block when it is needed.
    private func admitDown() -> String? {
        let highest = core.highestFence
        guard highest < UInt64.max else {
            return "panel \(config.id) has handed out fence \(UInt64.max), the last there is, and will not repeat one; "
                + "nothing was done. A new journal (or none) starts its fences again at 1"
        }
        guard let journal else { return nil }
        guard journal.admitsPress(nowMs: SystemClock.monotonic.milliseconds()) else {
            journal.noteRefusal()
            return unavailable(journal)
        }
        if highest >= reservedFence {
            // The fence this DOWN may take must be durable before anyone can see it.
            let upTo = highest + min(Journal.reservationBlock, UInt64.max - highest)
            guard journal.reserve(panel: config.id, upTo: upTo) else {
                journal.noteRefusal()
                return unavailable(journal)
            }
            reservedFence = upTo
        }
        return nil
    }

    private func unavailable(_ journal: Journal) -> String {
        "the journal cannot be written (\(journal.failureText)), so no fence can be made durable; nothing was done, try again in a few seconds"
    }

    package func refuse(_ message: String, to connection: Connection?, format: WireFormat, id: CommandID?, flush: inout FlushList) {
        guard let connection else { return role?.deliverRemoteReply(.error(.unavailable, message)) ?? () }
        flush.appendReply(to: connection, panel: index) { out, _ in
            MessageEncoder.encode(.error(.unavailable, message), format: format, id: id, into: &out)
        }
    }

    /// On a panel with queue groups any core call that ends a grant (an UP, a timer, a
    /// disconnect) may hand each group to its head with a new fence. Those fences are
    /// reserved ahead, one per group; the core hands off only within what is durable,
    /// and a line whose hand-off had to wait moves on once a reservation succeeds.
    @inline(never)
    private func reserveHandOffFences() {
        guard let journal else { return }
        let highest = core.highestFence
        let groups = UInt64(core.groupCount)
        if highest > UInt64.max - groups || highest + groups > reservedFence,
            highest < UInt64.max, journal.admitsPress(nowMs: SystemClock.monotonic.milliseconds())
        {
            let upTo = highest + min(Journal.reservationBlock, UInt64.max - highest)
            if journal.reserve(panel: config.id, upTo: upTo) { reservedFence = upTo } else { journal.noteRefusal() }
        }
        core.fenceLimit = reservedFence
    }

    /// Releases every button with `reason=shutdown`. On `queue`.
    func releaseAllForShutdown() {
        assertOnQueue()
        // A node that does not decide the panel has nothing of it to release.
        if let role, !role.decides { return }
        var flush = FlushList()
        output.removeAll()
        core.shutdown(now: clock.now(), into: &output)
        deliver(replyTo: nil, format: .text, id: nil, flush: &flush)
        finishBatch(&flush)
    }

    /// Releases what the session owned and removes it from the members.
    func disconnect(_ connection: Connection, flush: inout FlushList) {
        assertOnQueue()
        if let role { return role.disconnect(connection, flush: &flush) }
        disconnectHere(connection, flush: &flush)
    }

    /// `disconnect` in this node's core: every session on a single node; in cluster mode,
    /// while this node decides the panel.
    package func disconnectHere(_ connection: Connection, flush: inout FlushList) {
        if members.removeValue(forKey: connection.session) != nil {
            memberCount.subtract(1, ordering: .relaxed)
        }
        if !waiters.isEmpty { waiters.removeValue(forKey: connection.session) }
        if !deferredReplies.isEmpty { _ = deferredReplies.drop(connection.session) }
        if core.hasFairGroups { reserveHandOffFences() }
        output.removeAll()
        core.disconnect(session: connection.session, now: clock.now(), into: &output)
        deliver(replyTo: nil, format: .text, id: nil, flush: &flush)
    }

    /// The state now, after performing whatever the clock owed.
    func advancedSnapshot(flush: inout FlushList) -> PanelSnapshot {
        let now = clock.now()
        // Advancing is deciding: only while this node may.
        if let role, !role.mayDecideNow() { return core.snapshot(at: now) }
        if core.hasFairGroups { reserveHandOffFences() }
        output.removeAll()
        core.advance(to: now, into: &output)
        deliver(replyTo: nil, format: .text, id: nil, flush: &flush)
        return core.snapshot(at: now)
    }

    // MARK: Time

    /// Runs the panel's due timers (hold, talk, tap) at the clock's time; on `queue`.
    /// Tests with a manual clock call it after moving the clock.
    func timerFired() {
        assertOnQueue()
        timerDeadline = nil
        // A timer is a decision too: past the deadline it steps down instead of firing.
        if let role, !role.mayDecideNow() { return }
        if core.hasFairGroups { reserveHandOffFences() }
        output.removeAll()
        if let readWait { core.readThrough = readWait.readThrough }
        core.advance(to: clock.now(), into: &output)
        var flush = FlushList()
        deliver(replyTo: nil, format: .text, id: nil, flush: &flush)
        finishBatch(&flush)
    }

    /// Ends a visit to the queue: the timer follows the core's next deadline, and the
    /// handling time of the visit's commands (read to reply queued) is recorded. The
    /// caller writes what was appended, after leaving the queue.
    func endVisit(commandsReadAt receivedAt: Int64? = nil, count: Int = 0) {
        assertOnQueue()
        if let receivedAt, count > 0 {
            let elapsed = clock.nanoseconds() - receivedAt
            counters.latency.record(UInt64(clamping: elapsed), count: UInt64(count))
        }
        wallReading = nil
        scheduleTimer()
    }

    /// Ends work this queue started itself (a timer): the replies and events go out.
    package func finishBatch(_ flush: inout FlushList) {
        finishVisit()
        flush.flushAll()
    }

    /// `finishBatch` for a caller that writes the output itself once it has left the
    /// queue (a relay link's thread, as a reactor does after its visit).
    package func finishVisit() {
        wallReading = nil
        scheduleTimer()
    }
}
