import ArbiterCluster
import ArbiterCore
import ArbiterIO
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
final class PanelHost: @unchecked Sendable {
    let index: Int
    let config: PanelConfig
    let queue: DispatchQueue
    /// The ids as bytes, for the fast text encoding of replies and events.
    let names: PanelNames
    /// Button ids to indexes; immutable, so reactors read it without the queue.
    let buttonIndex: IDTable<Int>
    @exclusivity(unchecked) var core: PanelCore
    @exclusivity(unchecked) var members: [SessionID: Connection] = [:]
    /// Connections waiting in a queue group's line, for their hand-off GRANTED: a waiter
    /// need not be a member. Dropped at the hand-off, at DEQUEUED and at disconnect.
    @exclusivity(unchecked) var waiters: [SessionID: Connection] = [:]
    @exclusivity(unchecked) var output = PanelOutput()
    private var timer: DispatchSourceTimer?
    /// The clock the core decides by (the server's).
    let clock: any TimeSource
    @exclusivity(unchecked) private var timerDeadline: Instant?
    @exclusivity(unchecked) var history = HistoryRing(capacity: Request.maxHistoryCount)
    /// Open connections by session (the server's registry), to reach a waiter that left
    /// this panel's table.
    let sessions: Locked<[SessionID: Connection]>
    /// Whether any panel has keys at all: if none, every session is admin everywhere.
    private let hasKeys: Bool
    @exclusivity(unchecked) var counters = PanelCounters()
    /// Read by PANELS from any queue.
    let memberCount = Atomic<Int>(0)

    private var journal: Journal?
    /// Fences up to this one are durably reserved in the journal.
    private var reservedFence: UInt64 = 0
    /// Journal lines of one command's output, written before any of it is sent.
    @exclusivity(unchecked) private var journalBuffer: [UInt8] = []
    /// Wall time read once per visit, for journal and history records.
    @exclusivity(unchecked) private var wallReading: Int64?
    /// Cluster mode's context; nil on a single node, where nothing below looks at cluster
    /// state. Immutable, so one read per command decides which path it takes.
    let cluster: ClusterContext?
    /// Cluster mode: whether this node decides the panel, who leads it, relayed members.
    @exclusivity(unchecked) var clusterState = PanelClusterState()
    /// Cluster mode: the relayed session the command being run came from.
    @exclusivity(unchecked) var remoteRequester: RemoteRequester?

    init(
        index: Int, config: PanelConfig, lastFence: UInt64, reservedFence: UInt64 = 0, history: [HistoryRecord] = [], journal: Journal? = nil,
        clock: any TimeSource = SystemClock.monotonic, sessions: Locked<[SessionID: Connection]> = Locked([:]), hasKeys: Bool = true,
        cluster: ClusterContext? = nil
    ) {
        self.cluster = cluster
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

    /// Starts the panel's timer source.
    func start() {
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
    @inline(__always) func assertOnQueue() {
        #if DEBUG
            dispatchPrecondition(condition: .onQueue(queue))
        #endif
    }

    /// The access a session presenting `key` has here.
    func access(key: String?) -> Access {
        hasKeys ? config.keys.access(forKey: key) : .admin
    }

    // MARK: Commands

    /// Runs one command of `connection`. On `queue` (inside `queue.sync`).
    func execute(_ command: ParsedCommand, receivedAt: Int64, from connection: Connection, flush: inout FlushList) {
        assertOnQueue()
        if cluster != nil { return executeInCluster(command, receivedAt: receivedAt, from: connection, flush: &flush) }
        executeHere(command, receivedAt: receivedAt, session: connection.session, name: connection.name, key: connection.key, from: connection, flush: &flush)
    }

    /// Runs a command in this node's core: every command on a single node; in cluster
    /// mode, once this node is known to decide the panel. `connection` is nil for a
    /// session relayed from another node (`remoteRequester` says where its reply goes).
    func executeHere(
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
        case .hello, .help, .panels, .history, .ping, .quit, .kick: return
        }
        run(request, access: access, now: now, replyFormat: command.format, id: command.id, session: session, name: name, from: connection, flush: &flush)
    }

    /// The general path's one look-up of a button id (the fast path's is
    /// `ServerState.resolvePress`, from the line's bytes, in the same table).
    func resolve(_ press: Press<String>) -> PanelRequest {
        guard let button = buttonIndex[press.button] else { return .unknownButton(press.verb, id: press.button) }
        return .press(press.resolved(panel: index, button: button))
    }

    /// Runs a press command whose ids the reactor already looked up. On `queue`.
    func executePress(_ press: Press<Int>, receivedAt: Int64, format: WireFormat, from connection: Connection, flush: inout FlushList) {
        assertOnQueue()
        if cluster != nil { return executePressInCluster(press, receivedAt: receivedAt, format: format, from: connection, flush: &flush) }
        counters.commands += 1
        let access = access(key: connection.key)
        run(
            .press(press), access: access, now: Instant(nanoseconds: receivedAt),
            replyFormat: format, id: nil, session: connection.session, name: connection.name, from: connection, flush: &flush)
    }

    func run(
        _ request: PanelRequest, access: Access, now: Instant, replyFormat: WireFormat, id: CommandID?,
        session: SessionID, name: String, from connection: Connection?, flush: inout FlushList
    ) {
        var before: PanelCore?
        if case .press(let press) = request, press.verb == .down {
            if let refusal = admitDown() {
                return refuse(refusal, to: connection, format: replyFormat, id: id, flush: &flush)
            }
            // Kept so that a press whose records cannot be written is undone, unseen.
            if journal != nil { before = core }
        }
        if core.hasFairGroups { reserveHandOffFences() }
        output.removeAll()
        core.handle(request, session: session, name: name, access: access, now: now, into: &output)
        if !deliver(replyTo: connection, format: replyFormat, id: id, undoable: before != nil, flush: &flush), let before, let journal {
            core = before
            journal.noteRefusal()
            refuse(unavailable(journal), to: connection, format: replyFormat, id: id, flush: &flush)
        }
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

    func refuse(_ message: String, to connection: Connection?, format: WireFormat, id: CommandID?, flush: inout FlushList) {
        guard let connection else { return replyRemotely(.error(.unavailable, message)) }
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
        if cluster != nil, clusterState.block == nil { return }
        var flush = FlushList()
        output.removeAll()
        core.shutdown(now: clock.now(), into: &output)
        deliver(replyTo: nil, format: .text, id: nil, flush: &flush)
        finishBatch(&flush)
    }

    /// Releases what the session owned and removes it from the members.
    func disconnect(_ connection: Connection, flush: inout FlushList) {
        assertOnQueue()
        if cluster != nil { return disconnectInCluster(connection, flush: &flush) }
        if members.removeValue(forKey: connection.session) != nil {
            memberCount.subtract(1, ordering: .relaxed)
        }
        if !waiters.isEmpty { waiters.removeValue(forKey: connection.session) }
        if core.hasFairGroups { reserveHandOffFences() }
        output.removeAll()
        core.disconnect(session: connection.session, now: clock.now(), into: &output)
        deliver(replyTo: nil, format: .text, id: nil, flush: &flush)
    }

    private func replyHistory(_ count: Int, access: Access, to connection: Connection?, _ command: ParsedCommand, flush: inout FlushList) {
        let format = command.format
        let id = command.id
        guard let connection else { return replyHistoryRemotely(count, access: access, format: format, id: id) }
        guard access >= .view else {
            return flush.appendReply(to: connection, panel: index) { out, _ in
                MessageEncoder.encode(.error(.forbidden, "HISTORY needs the view key of panel \(config.id)"), format: format, id: id, into: &out)
            }
        }
        let entries = history.last(count)
        flush.appendReply(to: connection, panel: index) { out, _ in encodeHistory(entries, format: format, id: id, into: &out) }
    }

    /// HISTORY's answer: the records, then `OK HISTORY`; for a local session and, through
    /// the relay, for a session of another node.
    func encodeHistory(_ entries: [HistoryRing.Entry], format: WireFormat, id: CommandID?, into out: inout [UInt8]) {
        for entry in entries {
            let record: HistoryRecord?
            switch entry {
            case .live(let event, let at): record = HistoryRecord(event: event, panel: config, at: at)
            case .loaded(let loaded): record = loaded
            }
            guard let record else { continue }
            MessageEncoder.encode(.record(record), format: format, id: id, into: &out)
        }
        MessageEncoder.encode(.okCount(verb: "HISTORY", panel: config.id, count: entries.count), format: format, id: id, into: &out)
    }

    /// The state now, after performing whatever the clock owed.
    func advancedSnapshot(flush: inout FlushList) -> PanelSnapshot {
        let now = clock.now()
        // Advancing is deciding: only while this node may.
        if cluster != nil, !mayDecideNow() { return core.snapshot(at: now) }
        if core.hasFairGroups { reserveHandOffFences() }
        output.removeAll()
        core.advance(to: now, into: &output)
        deliver(replyTo: nil, format: .text, id: nil, flush: &flush)
        return core.snapshot(at: now)
    }

    // MARK: Output

    /// Writes the core's decisions: the reply to its requester, each event to every
    /// member, in the core's order. With `undoable`, records that cannot be written stop
    /// it before anything is sent: false, and the caller undoes the decision.
    @discardableResult
    func deliver(
        replyTo requester: Connection?, format: WireFormat, id: CommandID?, undoable: Bool = false,
        flush: inout FlushList
    ) -> Bool {
        func wall() -> Int64 {
            if let w = wallReading { return w }
            let w = clock.wallMilliseconds()
            wallReading = w
            return w
        }
        // A leader's decisions hold only under its lease: written after it lapsed (a
        // pause between here and the write), they are dropped instead (`outputStands`).
        if let cluster, clusterState.block != nil { flush.leaseEpoch = cluster.outputEpoch }
        if let journal {
            // On disk (in the kernel) before any peer can see it: a connection that is
            // draining through EPOLLOUT may send what is appended below at once.
            for event in output.events {
                if let record = HistoryRecord(event: event, panel: config, at: wall()) {
                    MessageEncoder.encode(.record(record), format: .json, into: &journalBuffer)
                }
            }
            let written = journal.append(panel: config.id, journalBuffer)
            journalBuffer.removeAll(keepingCapacity: true)
            // Anything else stands without its records: a release or a timer's outcome
            // is never held back (no button may stay stuck), and is counted as unwritten.
            if !written, undoable { return false }
        }
        // A queue's hand-off tells its head apart: that rare case has its own loop, so
        // the common one stays as small as the optimizer needs to inline what it calls.
        if !output.notices.isEmpty { return deliverWithNotices(replyTo: requester, format: format, id: id, flush: &flush) }
        let events = output.events
        for i in 0..<events.count {
            if i == output.eventsBeforeReply { deliverReply(to: requester, format: format, id: id, flush: &flush) }
            let event = events[i]
            count(event)
            if HistoryRecord.isJournaled(event.kind) {
                history.append(.live(event, at: wall()))
            }
            broadcast(event, flush: &flush)
        }
        if output.eventsBeforeReply == events.count { deliverReply(to: requester, format: format, id: id, flush: &flush) }
        if !waiters.isEmpty || !clusterState.remoteWaiters.isEmpty { forgetDequeuedWaiters() }
        return true
    }

    /// `deliver` for an output with replies to other sessions, each in its place.
    @inline(never)
    private func deliverWithNotices(replyTo requester: Connection?, format: WireFormat, id: CommandID?, flush: inout FlushList) -> Bool {
        let events = output.events
        var notice = 0
        for i in 0...events.count {
            if i == output.eventsBeforeReply { deliverReply(to: requester, format: format, id: id, flush: &flush) }
            while notice < output.notices.count, output.notices[notice].eventsBefore == i {
                deliverNotice(output.notices[notice], flush: &flush)
                notice += 1
            }
            guard i < events.count else { break }
            let event = events[i]
            count(event)
            if HistoryRecord.isJournaled(event.kind) {
                if wallReading == nil { wallReading = clock.wallMilliseconds() }
                history.append(.live(event, at: wallReading ?? 0))
            }
            broadcast(event, flush: &flush)
        }
        if !waiters.isEmpty || !clusterState.remoteWaiters.isEmpty { forgetDequeuedWaiters() }
        return true
    }

    /// Waiters that left their line (DEQUEUED) need no hand-off GRANTED any more.
    @inline(never)
    private func forgetDequeuedWaiters() {
        for event in output.events {
            if case .dequeued(_, _, let session, _, _) = event.kind { waiters.removeValue(forKey: session) }
        }
        if !clusterState.remoteWaiters.isEmpty { tellNodesOfDequeuedWaiters(output.events) }
    }

    /// A reply to a session that did not send the command: a queue's head is told it
    /// is granted, in its own format, whether it is a member or not.
    private func deliverNotice(_ notice: PanelOutput.Notice, flush: inout FlushList) {
        guard
            let connection = waiters.removeValue(forKey: notice.session) ?? members[notice.session]
                ?? sessions.withLock({ $0[notice.session] })
        else { return cluster == nil ? () : deliverRemoteNotice(notice) }
        flush.append(to: connection, panel: index) { out, format in
            MessageEncoder.encode(notice.reply, names: names, format: format, id: nil, into: &out)
        }
    }

    private func deliverReply(to requester: Connection?, format: WireFormat, id: CommandID?, flush: inout FlushList) {
        guard let reply = output.reply else { return }
        guard let requester else {
            if let remote = remoteRequester { deliverRemoteReply(reply, to: remote) }
            return
        }
        flush.appendReply(to: requester, panel: index) { out, _ in
            MessageEncoder.encode(reply, names: names, format: format, id: id, into: &out)
        }
        // Membership changes at the reply: the joiner's first event is its own JOINED,
        // and a leaver gets nothing after OK LEAVE.
        switch reply {
        case .deniedBusy, .deniedForbidden, .denied:
            counters.denials += 1
        case .queued:
            waiters[requester.session] = requester
        case .joined:
            if members.updateValue(requester, forKey: requester.session) == nil {
                memberCount.add(1, ordering: .relaxed)
            }
        case .left:
            if members.removeValue(forKey: requester.session) != nil {
                memberCount.subtract(1, ordering: .relaxed)
            }
        default:
            break
        }
    }

    private func count(_ event: PanelEvent) {
        counters.events += 1
        switch event.kind {
        case .pressed: counters.grants += 1
        case .fired: counters.fires += 1
        case .released(_, let reason, _): counters.releases[reason.index] += 1
        default: break
        }
    }

    private func broadcast(_ event: PanelEvent, flush: inout FlushList) {
        if !clusterState.memberNodes.isEmpty { relayEvent(event) }
        if case .released(let button, let reason, let owner) = event.kind, !clusterState.remoteSessions.isEmpty {
            tellNodeOfGrantEnded(button: button, reason: reason, owner: owner)
        }
        guard !members.isEmpty else { return }
        var text: [UInt8] = []
        var json: [UInt8] = []
        for member in members.values {
            flush.append(to: member, panel: index) { out, format in
                switch format {
                case .text:
                    if text.isEmpty { MessageEncoder.encode(event, names: names, format: .text, into: &text) }
                    out.append(contentsOf: text)
                case .json:
                    if json.isEmpty { MessageEncoder.encode(event, names: names, format: .json, into: &json) }
                    out.append(contentsOf: json)
                }
            }
        }
    }

    // MARK: Time

    /// Runs the panel's due timers (hold, talk, tap) at the clock's time; on `queue`.
    /// Tests with a manual clock call it after moving the clock.
    func timerFired() {
        assertOnQueue()
        timerDeadline = nil
        // A timer is a decision too: past the deadline it steps down instead of firing.
        if cluster != nil, !mayDecideNow() { return }
        if core.hasFairGroups { reserveHandOffFences() }
        output.removeAll()
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
    func finishBatch(_ flush: inout FlushList) {
        finishVisit()
        flush.flushAll()
    }

    /// `finishBatch` for a caller that writes the output itself once it has left the
    /// queue (a relay link's thread, as a reactor does after its visit).
    func finishVisit() {
        wallReading = nil
        scheduleTimer()
    }

    /// Asks Dispatch to wake the core at its next deadline; a wake-up is only a hint.
    private func scheduleTimer() {
        let next = core.nextDeadline
        guard next != timerDeadline else { return }
        timerDeadline = next
        guard let next else { return timer?.schedule(deadline: .distantFuture) ?? () }
        // In nanoseconds: a delay rounded down to milliseconds wakes the core before its
        // deadline, which then has nothing to do and asks again at once.
        let delay = max(0, next.nanoseconds &- clock.now().nanoseconds)
        timer?.schedule(deadline: .now() + .nanoseconds(Int(delay)), leeway: .milliseconds(1))
    }
}
