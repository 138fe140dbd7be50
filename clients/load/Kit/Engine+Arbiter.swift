extension Engine {
    func greetLine(_ peer: Peer) {
        // An idle peer sends nothing: the server greets it after its 200 ms wait.
        guard peer.role != .idler else { return }
        var hello = Array("HELLO \(peer.name)\n".utf8)
        if peer.joins { hello += plan.panels[peer.panel].commands.lineJoin }
        send(peer, hello)
    }

    func greetWebSocket(_ peer: Peer) {
        guard peer.role != .idler else { return }
        var frames: [UInt8] = []
        peer.ws?.appendText(Array(#"{"cmd":"hello","name":"\#(peer.name)"}"#.utf8), to: &frames)
        if peer.joins { peer.ws?.appendText(plan.panels[peer.panel].commands.jsonJoin, to: &frames) }
        send(peer, frames)
    }

    func sendJoin(_ peer: Peer) {
        if peer.stream >= 0 {
            // After what the connection has read so far, before the answer.
            tellChecker(of: peer) { $0.joinSent(peer.stream) }
        }
        switch peer.transport {
        case .line:
            send(peer, plan.panels[peer.panel].commands.lineJoin)
        case .webSocket:
            var frame: [UInt8] = []
            peer.ws?.appendText(plan.panels[peer.panel].commands.jsonJoin, to: &frame)
            send(peer, frame)
        case .redis:
            break
        }
    }

    /// One message from the server, in the order the connection received it.
    func handle(_ peer: Peer, _ m: WireMessage, _ raw: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) {
        if peer.stream >= 0 {
            checkBatches[peer.panel].append((peer.stream, m))
            if checkBatches[peer.panel].count >= 4096 { flushChecker() }
        }
        if plan.options.targets.count > 1, m.kind == .okBye || m.kind == .error && m.error == .shuttingDown {
            return nodeLeaving(peer, m)
        }
        // A large panel's joiner's own JOINED: outside the chain, nothing to do.
        if m.kind == .joined, m.seq < 0 { return }
        if m.kind == .dequeued, m.seq < 0 {
            // Cluster mode: the term that kept the line ended, and the waiter alone is told
            // (no seq): no hand-off will come, so the cycle starts again.
            if peer.role == .presser, peer.step == .queued {
                if measuring { stats.linesLost += 1 }
                startCycle(peer)
            }
            return
        }
        if peer.role == .player, m.kind == .roundState || m.kind == .rankState { return snapshotLine(peer, m) }
        if m.kind.isEvent {
            if m.kind == .released, peer.role == .presser || peer.role == .player, m.fence == peer.fence { peer.grantEnded = true }
            if plan.options.workload == .buzz { fairEvent(peer, m) }
            return event(peer.panel, m)
        }
        switch peer.state {
        case .greeting:
            switch m.kind {
            case .welcome:
                peer.session = m.session
                if peer.role == .idler { becomeReady(peer) }
            case .okHello:
                peer.session = m.session
                if !peer.joins { becomeReady(peer) }
            case .okJoin:
                peer.term = m.term
                becomeReady(peer)
                if peer.role == .player { playerJoined(peer) }
            case .error where m.error == .unavailable && plan.options.targets.count > 1:
                rejoinLater(peer)
            case .error, .unknown:
                control.abort("\(peer.name) could not set up: \(Engine.text(raw, range))")
            default:
                break
            }
        case .ready, .finalJoin:
            switch m.kind {
            case .okJoin where peer.state == .finalJoin:
                peer.state = .finished
                finalPending -= 1
            case .error where peer.state == .finalJoin && m.error == .unavailable && plan.options.targets.count > 1:
                rejoinLater(peer)
            case .okJoin where peer.role == .host || peer.role == .player:
                buzzSnapshot(peer, m)
            case .granted, .denied, .okUp, .okCancel, .error, .queued, .ranked, .okOther:
                if peer.role == .presser {
                    presserReply(peer, m, raw, range)
                } else if peer.role == .player || peer.role == .host {
                    fairReply(peer, m, raw, range)
                } else if m.kind == .okOther {
                    break
                } else {
                    stats.error("\(peer.name): \(Engine.text(raw, range))")
                }
            default:
                break
            }
        default:
            break
        }
    }

    private func event(_ panel: Int, _ m: WireMessage) {
        guard measuring else { return }
        stats.events += 1
        // buzz measures press->BUZZED at its observers (fairEvent).
        guard m.kind == .pressed, plan.options.workload != .buzz else { return }
        if let sent = plan.panels[panel].presses.sentAt(fence: m.fence) {
            if now >= sent { stats.event.record(now - sent) }
        } else if pendingPresses.count < 100_000 {
            // Its presser's GRANTED has not been read yet (another socket, same batch).
            pendingPresses.append((panel, m.fence, now))
        }
    }

    func resolvePendingPresses() {
        guard !pendingPresses.isEmpty else { return }
        var kept = 0
        for (panel, fence, at) in pendingPresses {
            if let sent = plan.panels[panel].presses.sentAt(fence: fence) {
                if measuring, at >= sent { stats.event.record(at - sent) }
            } else if now &- at < 2 * LoadClock.second {
                pendingPresses[kept] = (panel, fence, at)
                kept += 1
            }
        }
        pendingPresses.removeLast(pendingPresses.count - kept)
    }

    /// Starts a press cycle if the run still wants one.
    func startCycle(_ peer: Peer) {
        peer.step = .idle
        guard control.phase == .running, peer.state == .ready else { return }
        guard control.takeCycle() else {
            control.advance(from: .running, to: .draining)
            return
        }
        if peer.transport == .redis { return startRedisCycle(peer) }
        let buttons = plan.panels[peer.panel].pressButtons
        peer.button = peer.fixedButton >= 0 ? peer.fixedButton : buttons[peer.random.below(buttons.count)]
        sendDown(peer)
    }

    private func sendDown(_ peer: Peer) {
        peer.step = .awaitingDown
        peer.sentAt = LoadClock.now()
        // Read before the DOWN is written: every fence in it was granted before this DOWN
        // could reach the server.
        if let overlap = plan.overlap { peer.fenceFloor = overlap.fenceFloor(panel: peer.panel) }
        let b = Int(peer.button)
        let commands = plan.panels[peer.panel].commands
        switch peer.transport {
        case .line:
            send(peer, commands.lineDown[b])
        case .webSocket:
            var frame: [UInt8] = []
            peer.ws?.appendText(commands.jsonDown[b], to: &frame)
            send(peer, frame)
        case .redis:
            break
        }
    }

    func sendUp(_ peer: Peer) {
        peer.step = .awaitingUp
        peer.sentAt = LoadClock.now()
        // The overlap check's release time is stamped when these bytes are written.
        peer.releasePending = plan.overlap != nil
        let b = Int(peer.button)
        let commands = plan.panels[peer.panel].commands
        switch peer.transport {
        case .line:
            peer.output.append(contentsOf: commands.lineUpPrefix[b])
            CommandBook.appendDecimal(peer.fence, to: &peer.output)
            peer.output.append(0x0A)
            markDirty(peer)
        case .webSocket:
            var payload = commands.jsonUpPrefix[b]
            CommandBook.appendDecimal(peer.fence, to: &payload)
            payload.append(UInt8(ascii: "}"))
            var frame: [UInt8] = []
            peer.ws?.appendText(payload, to: &frame)
            send(peer, frame)
        case .redis:
            send(peer, commands.redisDel[b])
        }
    }

    @inline(__always)
    func recordReply(_ peer: Peer) {
        guard measuring, now >= peer.sentAt else { return }
        let latency = now - peer.sentAt
        stats.reply.record(latency)
        stats.replies += 1
        if control.showsProgress { progressInterval.record(latency) }
    }

    private func presserReply(_ peer: Peer, _ m: WireMessage, _ raw: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) {
        switch (m.kind, peer.step) {
        case (.queued, .awaitingDown):
            // A queue group: the DOWN waits in line; its GRANTED comes by itself.
            recordReply(peer)
            if measuring { stats.queued += 1 }
            peer.step = .queued
        case (.granted, .queued), (.granted, .awaitingDown):
            if peer.step == .queued {
                if measuring { stats.handOffs += 1 }
            } else {
                recordReply(peer)
            }
            if measuring { stats.grants += 1 }
            plan.panels[peer.panel].presses.store(fence: m.fence, sentAt: peer.sentAt)
            plan.overlap?.granted(button: globalButton(peer), by: peer.id, readAt: readAt, fence: m.fence, floor: peer.downUndecided ? -1 : peer.fenceFloor)
            peer.downUndecided = false
            peer.fence = m.fence
            peer.grantEnded = false
            if plan.options.workload == .holds && control.phase == .running {
                peer.step = .holding
                let ms = UInt64(peer.random.below(plan.options.maxHoldMs + 1))
                schedule(peer, afterNanos: ms * LoadClock.millisecond)
            } else {
                sendUp(peer)
            }
        case (.denied, .awaitingDown):
            peer.downUndecided = false
            recordReply(peer)
            if measuring { stats.denials += 1 }
            think(peer)
        case (.okUp, .awaitingUp):
            recordReply(peer)
            // `ended=failover`: the grant's term ended under it and the session's node says
            // so, as a single node says `ended=fired`; counted with the failover UPs.
            if measuring {
                if m.reason == .failover { stats.failoverUps += 1 } else { stats.cycles += 1 }
            }
            startCycle(peer)
        case (.error, .awaitingDown) where m.error == .rateLimited, (.error, .awaitingUp) where m.error == .rateLimited:
            // The server's per-session rate limit: not an answer. The same request is
            // sent again after a pause; an UP must not be dropped, or the grant stays.
            stats.rateLimited += 1
            if peer.step == .awaitingUp {
                plan.overlap?.releaseRefused(button: globalButton(peer), by: peer.id, readAt: readAt, fence: peer.fence)
            }
            peer.step = peer.step == .awaitingDown ? .retryingDown : .retryingUp
            schedule(peer, afterNanos: UInt64(1 + peer.random.below(10)) * LoadClock.millisecond)
        case (.error, .awaitingDown) where m.error == .unavailable && plan.options.targets.count > 1:
            // Cluster mode: the panel has no leader that can decide (a failover under way,
            // etcd without a majority). Nothing was done; the DOWN is tried again shortly.
            recordReply(peer)
            if measuring { stats.unavailable += 1 }
            if m.mayHaveBeenDone { peer.downUndecided = true }
            peer.step = .retryingDown
            schedule(peer, afterNanos: UInt64(10 + peer.random.below(40)) * LoadClock.millisecond)
        case (.error, .awaitingUp) where plan.options.targets.count > 1 && m.error == .unavailable:
            // Cluster mode: the UP's answer was lost on the way between nodes (or its
            // leader went first), or the UP was not sent at all ("nothing was done": no
            // leader right now, or this node's lease lapsed while etcd still keeps it).
            // Either way the grant may still stand, and a grant nobody releases stays:
            // a new cycle's DOWN on the same button would even be answered with this very
            // grant again. The UP is sent again until an answer says what became of the
            // grant (OK UP, or not-owner/stale-fence when its term ended); the release
            // stays stamped at the first UP's write.
            recordReply(peer)
            if measuring { stats.unavailable += 1 }
            if peer.stream >= 0 {
                // After the error itself, which the checker has yet to read.
                tellChecker(of: peer) { $0.upUndecided(peer.stream, button: peer.button) }
            }
            peer.step = .retryingUp
            schedule(peer, afterNanos: UInt64(10 + peer.random.below(40)) * LoadClock.millisecond)
        case (.error, .awaitingUp) where plan.options.targets.count > 1 && (m.error == .staleFence || m.error == .notOwner):
            // Cluster mode: the grant's term ended under it (RELEASED reason=failover to the
            // members), or its node's sessions were ended (reason=disconnect), so the UP
            // finds a leader that holds no such grant. The release was stamped when the UP
            // was first written, before that, which is all the overlap check needs; the UP
            // is not repeated.
            recordReply(peer)
            if measuring { stats.failoverUps += 1 }
            startCycle(peer)
        case (.error, .awaitingUp) where peer.grantEnded && m.error == .staleFence:
            // The hold fired and someone else pressed before this UP: PROTOCOL.md checks
            // the fence first, so a late finger-lift gets stale-fence, not ended=fired.
            recordReply(peer)
            if measuring {
                stats.cycles += 1
                stats.lateUps += 1
            }
            startCycle(peer)
        default:
            stats.error("\(peer.name) after \(peer.step == .awaitingUp ? "UP" : "DOWN"): \(Engine.text(raw, range))")
            if stats.errors > 1000 { return control.abort("more than 1000 error replies; first: \(stats.errorSamples.first ?? "")") }
            think(peer)
        }
    }

    /// `--hosts`: the peer's node is shutting down (a rolling restart): it says goodbye and
    /// closes, and the close moves the peer to the next node as a lost node does
    /// (`reconnect`). Until then the peer sends nothing more. A DOWN refused
    /// `ERROR shutting-down` was not run, so it is not counted as unanswered; one
    /// answered only by the goodbye may have been granted (and released with the node).
    private func nodeLeaving(_ peer: Peer, _ m: WireMessage) {
        if m.kind == .error, peer.step == .awaitingDown {
            recordReply(peer)
            peer.step = .idle
        }
        if m.kind == .error, peer.downsInFlight > 0 { peer.downsInFlight -= 1 }
        peer.timerGeneration &+= 1
    }

    /// After a denial: holds waits a moment (many pressers, few buttons); the others
    /// try again at once, which is what contention means.
    private func think(_ peer: Peer) {
        guard plan.options.workload == .holds, control.phase == .running else { return startCycle(peer) }
        peer.step = .thinking
        schedule(peer, afterNanos: UInt64(1 + peer.random.below(20)) * LoadClock.millisecond)
    }

    /// Cluster mode: a JOIN met a panel without a reachable leader (a failover, a relay
    /// link being dialled). Its hint says to try again; a reconnected connection or the
    /// final JOIN must not end the run for it.
    private func rejoinLater(_ peer: Peer) {
        peer.step = .rejoining
        schedule(peer, afterNanos: UInt64(100 + peer.random.below(100)) * LoadClock.millisecond)
    }

    func timerFired(_ peer: Peer) {
        switch peer.step {
        case .rejoining:
            peer.step = .idle
            sendJoin(peer)
        case .holding, .retryingUp: sendUp(peer)
        case .thinking: startCycle(peer)
        case .retryingDown where peer.role == .host: if control.phase == .running { arm(peer, resetFirst: true) } else { peer.step = .idle }
        case .retryingDown where peer.role == .player: pressAgain(peer)
        case .awaitingDown where peer.role == .host: roundStalled(peer)
        case .retryingDown: if control.phase == .running { sendDown(peer) } else { peer.step = .idle }
        case .idle, .awaitingDown, .awaitingUp, .queued: break
        }
    }

    /// The run is draining: a held press is released now, a pause ends.
    func drain(_ peer: Peer) {
        switch peer.step {
        case .holding, .retryingUp:
            peer.timerGeneration &+= 1
            sendUp(peer)
        case .thinking, .retryingDown:
            peer.timerGeneration &+= 1
            peer.step = .idle
        case .idle, .awaitingDown, .awaitingUp, .queued, .rejoining:
            // A rejoining peer sends its JOIN when its timer fires. A queued DOWN is granted when the line moves; its UP follows as usual.
            break
        }
    }

    /// The peer's current button in the run's global numbering (the overlap check's).
    @inline(__always)
    func globalButton(_ peer: Peer) -> Int {
        plan.panels[peer.panel].buttonOffset + Int(peer.button)
    }

    static func text(_ raw: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: raw[range]), as: UTF8.self)
    }
}
