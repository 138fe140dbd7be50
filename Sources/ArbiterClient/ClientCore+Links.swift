import Dispatch
import Foundation

/// Keeping a link up: connecting with HELLO, reading it, noticing it died (PING), making
/// it again with backoff on the next host, and joining the panels again.
extension ClientCore {
    /// The first connection: each host once, in order. A refused HELLO (a wrong key)
    /// throws at once: another node of the same cluster would refuse it too.
    static func connect(hosts: [HostAddress], name: String, key: String?, options: ArbiterClientOptions) async throws -> ClientCore {
        let core = ClientCore(hosts: hosts, name: name, key: key, options: options)
        var failures: [String] = []
        for (index, host) in hosts.enumerated() {
            core.locked { core.s.hostIndex = index }
            do {
                try await core.establish(host)
                core.start()
                return core
            } catch let error as ArbiterClientError {
                if case .server = error {
                    core.close()
                    throw error
                }
                failures.append("\(error)")
            } catch {
                failures.append("\(host): \(error)")
            }
        }
        core.close()
        throw ArbiterClientError.unreachable(failures.joined(separator: "; "))
    }

    private func start() {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "arbiter-client.keepalive"))
        let interval = max(0.05, min(options.pingAfter, options.deadAfter) / 4)
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [weak self] in self?.tick() }
        timer.resume()
        let task = Task { await self.supervise() }
        locked {
            self.timer = timer
            supervisor = task
        }
    }

    func close() {
        var after = Aftermath()
        let (task, timer): (Task<Void, Never>?, (any DispatchSourceTimer)?) = locked {
            guard !s.closed else { return (nil, nil) }
            s.closed = true
            if let slot = s.link {
                after.hangUps.append((slot.link, "the client was closed"))
                for pending in slot.pending.values {
                    pending.continuation?.resume(throwing: ArbiterClientError.closed)
                    pending.continuation = nil
                }
            }
            s.link = nil
            failWaiters(panel: nil, ArbiterClientError.closed)
            for ps in s.panels.values {
                ps.yield(.removed(reason: "the client was closed"))
                after.finishing += ps.streams.values
            }
            s.panels = [:]
            s.linkEnded?.resume()
            s.linkEnded = nil
            return (supervisor, self.timer)
        }
        timer?.cancel()
        task?.cancel()
        after.run()
    }

    // MARK: Making links

    /// Connects to `host` and says HELLO; the link is current from then on.
    func establish(_ host: HostAddress) async throws {
        let id = locked { makeID() }
        let timeout = options.connectTimeout
        let link: Link = try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try Link.open(id: id, host: host, timeout: timeout) })
            }
        }
        let slot = LinkSlot(link: link)
        var fields: [(String, Command.Field)] = [("name", .string(locked { s.name })), ("format", .string("json"))]
        if let key { fields.append(("key", .string(key))) }
        let hello = Command("hello", fields)
        let reply: Reply = try await withCheckedThrowingContinuation { continuation in
            let open: Bool = locked {
                guard !s.closed, s.link == nil else { return false }
                s.link = slot
                slot.pending["hello"] = PendingRequest(id: "hello", action: .hello, allowance: timeout, continuation: continuation)
                link.enqueue(hello.line(id: "hello"), id: "hello")
                return true
            }
            link.start(line: { [weak self] in self?.received($0, on: link) }, end: { [weak self] in self?.ended(link, reason: $0) })
            guard open else {
                link.hangUp()
                return continuation.resume(throwing: ArbiterClientError.closed)
            }
            link.flush()
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [weak self] in
                let late = self?.locked { slot.pending["hello"] != nil } ?? false
                if late { link.hangUp("no answer to HELLO within \(timeout) s") }
            }
        }
        if reply.isError {
            link.hangUp("HELLO refused")
            throw reply.serverError
        }
    }

    /// Waits for the link to end, then makes another, forever until closed.
    private func supervise() async {
        while true {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                locked {
                    if s.link == nil || s.closed { return continuation.resume() }
                    s.linkEnded = continuation
                }
            }
            var attempt = 0
            while true {
                // Jittered, so that a room of kiosks that lost one server do not all come
                // back in the same millisecond.
                let ceiling = min(options.maxReconnectDelay, options.reconnectDelay * pow(2, Double(min(attempt, 30))))
                try? await Task.sleep(nanoseconds: UInt64(ceiling * Double.random(in: 0.5...1) * 1e9))
                guard
                    let host: HostAddress = locked({
                        guard !s.closed else { return nil }
                        s.hostIndex = (s.hostIndex + 1) % hosts.count
                        return hosts[s.hostIndex]
                    })
                else { return }
                do {
                    try await establish(host)
                    break
                } catch {
                    attempt += 1
                }
            }
        }
    }

    // MARK: Reading

    func received(_ line: String, on link: Link) {
        let message = ServerMessage(line: line)
        var after = Aftermath()
        locked {
            guard let slot = s.link, slot.link === link else { return }
            slot.lastReceived = .now()
            // WELCOME, and anything else in text, says nothing the JSON replies do not.
            guard let m = message else { return }
            if let id = m.id, let pending = slot.pending[id] {
                if m.isReplyPart { return pending.lines.append(m) }
                slot.pending[id] = nil
                handleReply(pending, Reply(lines: pending.lines, final: m), on: slot, &after)
                pending.continuation?.resume(returning: Reply(lines: pending.lines, final: m))
                pending.continuation = nil
                return
            }
            guard let panel = m.panel, var ps = s.panels[panel] else { return }
            for output in ps.tracker.receive(m, me: slot.session) {
                switch output {
                case .event(let event):
                    ps.yield(event)
                case .resyncNeeded(let expected, let received):
                    s.panels[panel] = ps
                    after.flush(requestJoin(panel, cause: .gap(expected: expected, received: received)))
                    ps = s.panels[panel] ?? ps
                case .endedUnseen(let ended):
                    after.flush(sendInternal(Command("history", panel: panel, [("n", .number(1000))]), action: .history(panel: panel, ended: ended), on: slot))
                }
            }
            s.panels[panel] = ps
        }
        after.run()
    }

    /// Under the lock: what a reply changes before its caller hears of it.
    private func handleReply(_ pending: PendingRequest, _ reply: Reply, on slot: LinkSlot, _ after: inout Aftermath) {
        switch pending.action {
        case .none, .leave:
            break
        case .hello:
            guard !reply.isError, let session = reply.final.string("session") else { return }
            slot.session = session
            if let name = reply.final.string("name") { s.name = name }
            for panel in s.panels.keys.sorted() {
                after.flush(requestJoin(panel, cause: .reconnected(host: slot.link.host.description)))
            }
            wakeWaiters()
        case .join(let panel, let cause):
            joined(panel, cause: cause, reply, on: slot, &after)
        case .down(let panel, let button):
            guard let session = slot.session else { return }
            switch EventDecoder.pressResult(reply.final) {
            case .granted(let fence)?: s.panels[panel]?.tracker.granted(button, fence: fence, session: session)
            case .queued?: s.panels[panel]?.tracker.queued(button, session: session)
            default: break
            }
        case .release(let panel, let button):
            if !reply.isError { s.panels[panel]?.tracker.released(button) }
        case .history(let panel, let ended):
            guard var ps = s.panels[panel] else { return }
            for event in ps.tracker.resolve(ended, records: reply.isError ? [] : reply.lines) { ps.yield(event) }
            s.panels[panel] = ps
        }
    }

    private func joined(_ panel: String, cause: ResyncCause?, _ reply: Reply, on slot: LinkSlot, _ after: inout Aftermath) {
        guard var ps = s.panels[panel] else { return }
        if ps.joining == slot.link.id { ps.joining = nil }
        if reply.final.type == "ok" {
            let (events, ended) = ps.tracker.applySnapshot(lines: reply.lines, ok: reply.final, cause: cause, me: slot.session)
            ps.syncedLink = slot.link.id
            ps.lastError = nil
            for event in events { ps.yield(event) }
            s.panels[panel] = ps
            if !ended.isEmpty {
                after.flush(sendInternal(Command("history", panel: panel, [("n", .number(1000))]), action: .history(panel: panel, ended: ended), on: slot))
            }
            wakeWaiters()
            return
        }
        ps.lastError = reply.serverError
        s.panels[panel] = ps
        if reply.errorCode == "unavailable" {
            // A failover under way: the panel comes back; its commands wait meanwhile.
            DispatchQueue.global().asyncAfter(deadline: .now() + Double.random(in: 0.25...0.5)) { [weak self] in
                self?.retryJoin(panel, cause: cause, on: slot)
            }
            return
        }
        // Refused (the panel is gone, or the key no longer opens it): it is over for us.
        s.panels[panel] = nil
        failWaiters(panel: panel, reply.serverError)
        ps.yield(.removed(reason: "JOIN refused: \(reply.serverError)"))
        after.finishing += ps.streams.values
    }

    private func retryJoin(_ panel: String, cause: ResyncCause?, on slot: LinkSlot) {
        let link = locked { s.link === slot ? requestJoin(panel, cause: cause) : nil }
        link?.flush()
    }

    func ended(_ link: Link, reason: String) {
        let unsent = link.takeUnsent()
        locked {
            guard let slot = s.link, slot.link === link else { return }
            s.link = nil
            for pending in slot.pending.values {
                pending.continuation?.resume(throwing: unsent.contains(pending.id) ? NotSent() : ArbiterClientError.connectionLost)
                pending.continuation = nil
                if case .history(let panel, let ended) = pending.action { s.panels[panel]?.tracker.unanswered(ended) }
            }
            for panel in s.panels.keys {
                s.panels[panel]?.syncedLink = nil
                s.panels[panel]?.joining = nil
                s.panels[panel]?.tracker.pause()
                if slot.ready, s.panels[panel]?.tracker.hasBeenJoined == true { s.panels[panel]?.yield(.disconnected(reason: reason)) }
            }
            s.linkEnded?.resume()
            s.linkEnded = nil
        }
    }

    // MARK: Liveness

    /// PINGs a quiet link; hangs up one silent past `deadAfter`, unless a command it
    /// carries may rightly still be waiting for its answer.
    private func tick() {
        let now = DispatchTime.now()
        func seconds(since then: DispatchTime) -> Double { Double(now.uptimeNanoseconds &- then.uptimeNanoseconds) / 1e9 }
        var after = Aftermath()
        locked {
            guard let slot = s.link else { return }
            let silence = seconds(since: slot.lastReceived)
            let commands = slot.pending.values.filter { !$0.isPing }
            let excused = commands.contains { seconds(since: $0.sentAt) < $0.allowance }
            // The server answers everything within 15 s, whatever happens to its cluster.
            let overdue = commands.contains { seconds(since: $0.sentAt) > 16 }
            if overdue {
                after.hangUps.append((slot.link, "a command had no answer within 16 s"))
            } else if silence > options.deadAfter && !excused {
                after.hangUps.append((slot.link, String(format: "the link was silent for %.1f s (PINGs unanswered)", silence)))
            } else if silence >= options.pingAfter, slot.lastPing.map({ seconds(since: $0) >= options.pingAfter }) ?? true {
                slot.lastPing = now
                after.flush(sendInternal(Command("ping"), action: .none, on: slot, isPing: true))
            }
        }
        after.run()
    }
}
