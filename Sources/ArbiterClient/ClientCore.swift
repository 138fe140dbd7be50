import ArbiterLock
import Dispatch
import Foundation

/// Everything a client knows, behind one lock: the current link and its unanswered
/// commands, the joined panels, the commands waiting for a link. The reader thread hands
/// it each line and it does all its work under the lock (events yielded, replies resumed:
/// neither calls back into it), so events leave in the order they came; socket writes and
/// stream endings happen after the lock is released. `ClientCore+Links` keeps the link up.
final class ClientCore: @unchecked Sendable {
    struct State {
        var closed = false
        var link: LinkSlot?
        var hostIndex = 0
        var nextID = 0
        var name: String
        var panels: [String: PanelSlot] = [:]
        var waiters: [Int: LinkWaiter] = [:]
        var downs: [Int: DownTicket] = [:]
        /// Requests cancelled before they were registered.
        var cancelled: Set<String> = []
        /// The supervisor, waiting for the current link to end.
        var linkEnded: CheckedContinuation<Void, Never>?
    }

    let hosts: [HostAddress]
    let key: String?
    let options: ArbiterClientOptions
    let lock = Locked(OwnerState())
    var s: State
    var supervisor: Task<Void, Never>?
    var timer: (any DispatchSourceTimer)?

    init(hosts: [HostAddress], name: String, key: String?, options: ArbiterClientOptions) {
        self.hosts = hosts
        self.key = key
        self.options = options
        s = State(name: name)
    }

    func locked<T>(_ body: () throws -> T) rethrows -> T {
        try lock.withLock { _ in try body() }
    }

    /// Under the lock.
    func makeID() -> Int {
        s.nextID += 1
        return s.nextID
    }

    // MARK: Commands

    /// Sends `command` once a link (and the panel) is ready, waiting at most
    /// `options.commandWait`; a command that never left waits for the next link.
    func perform(_ command: Command, action: ReplyAction = .none, ticket: Int? = nil) async throws -> Reply {
        let deadline = DispatchTime.now() + options.commandWait
        while true {
            let slot = try await readyLink(panel: command.panel, ticket: ticket, deadline: deadline)
            do {
                return try await send(command, action: action, ticket: ticket, on: slot)
            } catch is NotSent {
                continue
            }
        }
    }

    private func send(_ command: Command, action: ReplyAction, ticket: Int?, on slot: LinkSlot) async throws -> Reply {
        let id = "c\(locked { makeID() })"
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Reply, any Error>) in
                let flush: Link? = locked {
                    if s.closed { return fail(continuation, ArbiterClientError.closed) }
                    guard s.link === slot else { return fail(continuation, NotSent()) }
                    if s.cancelled.remove(id) != nil { return fail(continuation, CancellationError()) }
                    if let ticket {
                        if s.downs[ticket]?.withdrawn == true { return fail(continuation, ArbiterClientError.withdrawn) }
                        s.downs[ticket]?.sent = true
                    }
                    slot.pending[id] = PendingRequest(id: id, action: action, allowance: command.allowance, continuation: continuation)
                    slot.link.enqueue(command.line(id: id), id: id)
                    return slot.link
                }
                flush?.flush()
            }
        } onCancel: {
            locked {
                if let pending = s.link?.pending[id] {
                    pending.continuation?.resume(throwing: CancellationError())
                    pending.continuation = nil
                } else {
                    s.cancelled.insert(id)
                }
            }
        }
    }

    private func fail<T>(_ continuation: CheckedContinuation<T, any Error>, _ error: any Error) -> Link? {
        continuation.resume(throwing: error)
        return nil
    }

    /// Sends a command of the client's own (a JOIN again, a HISTORY, a PING) on `slot`,
    /// under the lock; the caller flushes the returned link after releasing it.
    func sendInternal(_ command: Command, action: ReplyAction, on slot: LinkSlot, isPing: Bool = false) -> Link {
        let id = "i\(makeID())"
        slot.pending[id] = PendingRequest(id: id, action: action, allowance: isPing ? 0 : command.allowance, isPing: isPing, continuation: nil)
        slot.link.enqueue(command.line(id: id), id: id)
        return slot.link
    }

    /// A link on which `panel`'s commands may go, waiting until `deadline`. `first` runs
    /// under the lock just before the waiter is in place, so that what it sends (a JOIN)
    /// cannot be answered before someone waits for the answer.
    func readyLink(
        panel: String?, ticket: Int?, deadline: DispatchTime, first: (() -> Link?)? = nil
    ) async throws -> LinkSlot {
        let waiter = locked { makeID() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<LinkSlot, any Error>) in
                let flush: Link? = locked {
                    if s.closed { return fail(continuation, ArbiterClientError.closed) }
                    if s.cancelled.remove("w\(waiter)") != nil { return fail(continuation, CancellationError()) }
                    let flush = first?()
                    if let panel, s.panels[panel] == nil { return fail(continuation, ArbiterClientError.closed) }
                    if let slot = usable(for: panel) {
                        continuation.resume(returning: slot)
                        return flush
                    }
                    s.waiters[waiter] = LinkWaiter(panel: panel, ticket: ticket, continuation: continuation)
                    return flush
                }
                flush?.flush()
                DispatchQueue.global().asyncAfter(deadline: deadline) { [self] in
                    locked {
                        guard let waiting = s.waiters.removeValue(forKey: waiter) else { return }
                        let error = waiting.panel.flatMap { s.panels[$0]?.lastError } ?? .notConnected(waitedSeconds: options.commandWait)
                        waiting.continuation.resume(throwing: error)
                    }
                }
            }
        } onCancel: {
            locked {
                if let waiting = s.waiters.removeValue(forKey: waiter) {
                    waiting.continuation.resume(throwing: CancellationError())
                } else {
                    s.cancelled.insert("w\(waiter)")
                }
            }
        }
    }

    /// Under the lock.
    private func usable(for panel: String?) -> LinkSlot? {
        guard let slot = s.link, slot.ready else { return nil }
        if let panel, s.panels[panel]?.syncedLink != slot.link.id { return nil }
        return slot
    }

    /// Under the lock: resumes every waiter that can go now.
    func wakeWaiters() {
        for (id, waiter) in s.waiters {
            if let panel = waiter.panel, s.panels[panel] == nil {
                s.waiters[id] = nil
                waiter.continuation.resume(throwing: ArbiterClientError.closed)
            } else if let slot = usable(for: waiter.panel) {
                s.waiters[id] = nil
                waiter.continuation.resume(returning: slot)
            }
        }
    }

    /// Under the lock: fails the waiters of `panel` (or all) with `error`.
    func failWaiters(panel: String?, _ error: any Error) {
        for (id, waiter) in s.waiters where panel == nil || waiter.panel == panel {
            s.waiters[id] = nil
            waiter.continuation.resume(throwing: error)
        }
    }

    // MARK: Presses

    func openTicket(panel: String, button: String) -> Int {
        locked {
            let id = makeID()
            s.downs[id] = DownTicket(panel: panel, button: button)
            return id
        }
    }

    func closeTicket(_ id: Int) {
        locked { s.downs[id] = nil }
    }

    func reopenTicket(_ id: Int) {
        locked { s.downs[id]?.sent = false }
    }

    /// An `up` or `cancel` of `button`: withdraws a `down` not written yet, or answers from
    /// what the client knows; nil when the server must be asked.
    func releaseLocally(panel: String, button: String) -> ReleaseResult? {
        locked {
            var withdrew = false
            for (id, ticket) in s.downs where ticket.panel == panel && ticket.button == button && !ticket.sent {
                s.downs[id]?.withdrawn = true
                withdrew = true
                for (waiterID, waiter) in s.waiters where waiter.ticket == id {
                    s.waiters[waiterID] = nil
                    waiter.continuation.resume(throwing: ArbiterClientError.withdrawn)
                }
            }
            if withdrew { return .withdrawn }
            let session = s.link?.session
            return s.panels[panel]?.tracker.localRelease(button, session: session)
        }
    }

    // MARK: Panels

    func state(of panel: String) -> PanelState? {
        locked { s.panels[panel]?.tracker.state }
    }

    func events(of panel: String) -> AsyncStream<PanelEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: PanelEvent.self, bufferingPolicy: .unbounded)
        let id = locked { makeID() }
        // Never under the lock: a stream's storage may call this from its deinit, which can
        // happen wherever its last reference goes.
        continuation.onTermination = { [weak self] _ in
            guard let core = self else { return }
            DispatchQueue.global().async { core.dropStream(id, of: panel) }
        }
        let registered: Bool = locked {
            guard s.panels[panel] != nil else { return false }
            s.panels[panel]?.streams[id] = continuation
            return true
        }
        if !registered {
            continuation.yield(.removed(reason: "not joined"))
            continuation.finish()
        }
        return stream
    }

    private func dropStream(_ id: Int, of panel: String) {
        locked { _ = s.panels[panel]?.streams.removeValue(forKey: id) }
    }

    /// Joins `panel` (or finds it joined) and waits until its snapshot is in.
    func join(_ panel: String) async throws -> PanelState {
        do {
            _ = try await readyLink(panel: panel, ticket: nil, deadline: .now() + options.commandWait) {
                if self.s.panels[panel] == nil { self.s.panels[panel] = PanelSlot(panel: panel) }
                return self.requestJoin(panel, cause: nil)
            }
        } catch {
            // A panel that never answered is not kept trying behind the caller's back.
            locked {
                if s.panels[panel]?.tracker.hasBeenJoined == false, s.panels[panel]?.streams.isEmpty == true { s.panels[panel] = nil }
            }
            throw error
        }
        guard let state = state(of: panel) else { throw ArbiterClientError.closed }
        return state
    }

    /// Under the lock: a JOIN of `panel` on the current link, unless one is under way.
    func requestJoin(_ panel: String, cause: ResyncCause?) -> Link? {
        guard let slot = s.link, slot.ready, var ps = s.panels[panel], ps.joining != slot.link.id, ps.syncedLink != slot.link.id || cause != nil
        else { return nil }
        ps.joining = slot.link.id
        s.panels[panel] = ps
        return sendInternal(Command("join", panel: panel), action: .join(panel: panel, cause: ps.tracker.hasBeenJoined ? cause : nil), on: slot)
    }

    /// Leaves `panel`: its streams end after a `removed` event.
    func remove(_ panel: String, reason: String) {
        let streams: [AsyncStream<PanelEvent>.Continuation] = locked {
            guard let ps = s.panels.removeValue(forKey: panel) else { return [] }
            ps.yield(.removed(reason: reason))
            failWaiters(panel: panel, ArbiterClientError.closed)
            return Array(ps.streams.values)
        }
        for stream in streams { stream.finish() }
    }
}
