import ArbiterCore
import ArbiterHooks
import ArbiterIO
import ArbiterWire
import Dispatch

extension PanelHost {
    /// The panel as JSON for /api/panels: config, every button's state, members, last
    /// fence and seq. On `queue`.
    package func stateJSON() -> [UInt8] {
        var flush = FlushList()
        let snapshot = advancedSnapshot(flush: &flush)
        finishBatch(&flush)
        var j = JSONObjectWriter()
        j.string("id", config.id)
        j.string("title", config.title)
        j.int("members", snapshot.members)
        j.unsigned("fence", snapshot.fence)
        j.unsigned("seq", snapshot.seq)
        j.raw("buttons", "[")
        for (i, b) in snapshot.buttons.enumerated() {
            let button = config.buttons[b.button]
            var item = JSONObjectWriter()
            item.string("id", button.id)
            item.string("label", button.label)
            item.string("kind", button.kind.rawValue)
            item.string("group", button.group)
            item.string("state", b.state.rawValue)
            if let owner = b.owner { item.string("owner", owner) } else { item.raw("owner", "null") }
            if let session = b.ownerSession { item.string("owner_session", session.description) } else { item.raw("owner_session", "null") }
            item.raw("progress", String(Double(b.permille) / 1000))
            switch button.kind {
            case .tap:
                item.int("timeout_ms", button.timeoutMs)
            case .hold:
                item.int("hold_ms", button.holdMs)
                item.int("progress_ms", button.progressMs)
            case .talk:
                item.int("timeout_ms", button.timeoutMs)
                item.int("long_ms", button.longMs)
                item.int("min_talk_ms", button.minTalkMs)
            }
            j.append(i > 0 ? "," : "")
            j.append(item.finish())
        }
        j.append("]")
        return Array(j.finish().utf8)
    }

    // MARK: History

    func replyHistory(_ count: Int, access: Access, to connection: Connection?, _ command: ParsedCommand, flush: inout FlushList) {
        let format = command.format
        let id = command.id
        guard let connection else { return role?.replyHistoryRemotely(count, access: access, format: format, id: id) ?? () }
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
    package func encodeHistory(_ entries: [HistoryRing.Entry], format: WireFormat, id: CommandID?, into out: inout [UInt8]) {
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

    // MARK: Output

    /// Writes the core's decisions: the reply to its requester, each event to every
    /// member, in the core's order. With `undoable`, records that cannot be written stop
    /// it before anything is sent: false, and the caller undoes the decision.
    @discardableResult
    package func deliver(
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
        role?.markDecisionOutput(&flush)
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
        // Before the broadcast: with a journal, a hooked event is on file before any member
        // can see it (the one wait hooks add, and only to hooked events).
        if hooks != nil { handToHooks() }
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
        if !waiters.isEmpty || role?.hasRemoteWaiters == true { forgetDequeuedWaiters() }
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
        if !waiters.isEmpty || role?.hasRemoteWaiters == true { forgetDequeuedWaiters() }
        return true
    }

    /// Out of line: inside `deliver`, the call made the common path too large to inline
    /// what it calls, and every panel paid for it (bench/callgrind.sh).
    /// In a cluster only the leader delivers: a follower never decides, but output it
    /// makes for its own sessions must not reach the hooks either.
    @inline(never)
    private func handToHooks() {
        guard role?.decides ?? true else { return }
        if wallReading == nil { wallReading = clock.wallMilliseconds() }
        hooks?.capture(output.events, wallMs: wallReading ?? 0, term: core.term)
    }

    /// Waiters that left their line (DEQUEUED) need no hand-off GRANTED any more.
    @inline(never)
    private func forgetDequeuedWaiters() {
        for event in output.events {
            if case .dequeued(_, _, let session, _, _) = event.kind { waiters.removeValue(forKey: session) }
        }
        if let role, role.hasRemoteWaiters { role.waitersMayHaveLeft(output.events) }
    }

    /// A reply to a session that did not send the command: a queue's head is told it
    /// is granted, in its own format, whether it is a member or not.
    private func deliverNotice(_ notice: PanelOutput.Notice, flush: inout FlushList) {
        if notice.answersEarlier { return deliverAnswer(notice, flush: &flush) }
        guard
            let connection = waiters.removeValue(forKey: notice.session) ?? members[notice.session]
                ?? sessions.withLock({ $0[notice.session] })
        else { return role?.deliverRemoteNotice(notice) ?? () }
        flush.append(to: connection, panel: index) { out, format in
            MessageEncoder.encode(notice.reply, names: names, format: format, id: nil, into: &out)
        }
    }

    /// The reply to a session's earlier command, into the slot it took in its output.
    private func deliverAnswer(_ notice: PanelOutput.Notice, flush: inout FlushList) {
        guard let slot = deferredReplies.take(notice.session) else { return role?.deliverRemoteNotice(notice) ?? () }
        flush.answer(slot.token, to: slot.connection, panel: index) { out, _ in
            MessageEncoder.encode(notice.reply, names: names, format: slot.format, id: slot.id, into: &out)
        }
    }

    /// The panel is no longer decided here while replies are owed (cluster mode: a press
    /// waited for its decision window when the term ended): each is `ERROR unavailable`.
    package func giveUpDeferredReplies(_ message: String, flush: inout FlushList) {
        guard !deferredReplies.isEmpty else { return }
        for slot in deferredReplies.dropAll() {
            flush.answer(slot.token, to: slot.connection, panel: index) { out, _ in
                MessageEncoder.encode(.error(.unavailable, message), format: slot.format, id: slot.id, into: &out)
            }
        }
    }

    /// The command's reply comes later (`deliverAnswer`): its session's later answers wait
    /// behind a slot taken now.
    @inline(never)
    private func deferReply(of requester: Connection?, format: WireFormat, id: CommandID?) {
        guard let requester else { return role?.deferRemoteReply() ?? () }
        deferredReplies.reserve(for: requester, format: format, id: id)
    }

    private func deliverReply(to requester: Connection?, format: WireFormat, id: CommandID?, flush: inout FlushList) {
        guard output.hasReply else {
            if output.replyDeferred { deferReply(of: requester, format: format, id: id) }
            return
        }
        let reply = output.replyIfAny
        guard let requester else { return role?.deliverRemoteReply(reply) ?? () }
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
        role?.eventDecided(event)
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

    /// The reactors read through a waiting press (`ReadWait`). On `queue`.
    private func readsCaughtUp() {
        readWait?.woke()
        timerFired()
    }

    /// Asks Dispatch to wake the core at its next deadline, or when the reactors must be
    /// asked to read through a waiting press; a wake-up is only a hint.
    func scheduleTimer() {
        var next = core.nextDeadline
        if readWait != nil, let earliest = core.earliestWaitingArrival {
            let wake: @Sendable () -> Void = { [weak self] in
                guard let self else { return }
                queue.async { self.readsCaughtUp() }
            }
            if let ask = readWait?.ask(earliest: earliest, now: clock.now(), wake: wake) { next = min(next ?? ask, ask) }
        } else if readWait != nil {
            readWait?.woke()
        }
        guard next != timerDeadline else { return }
        timerDeadline = next
        guard let next else { return timer?.schedule(deadline: .distantFuture) ?? () }
        // In nanoseconds: a delay rounded down to milliseconds wakes the core before its
        // deadline, which then has nothing to do and asks again at once. A short one (a
        // buzzer's decision window) is late by its leeway: every reply waits for it.
        let delay = max(0, next.nanoseconds &- clock.now().nanoseconds)
        timer?.schedule(deadline: .now() + .nanoseconds(Int(delay)), leeway: delay < 10_000_000 ? .microseconds(50) : .milliseconds(1))
    }
}
