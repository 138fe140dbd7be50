/// The buzz workload: a host opens a round with ARM; every player presses once when it
/// sees ARMED; the winner keeps its grant until the round ends; once every player has
/// its answer (GRANTED or RANKED), the host ends the round with RESET, presses once while
/// closed (which must be denied), and ARMs again. Members are told only the first
/// `announce` places, so the answers, not the events, tell when everyone is in.
extension Engine {
    /// What a peer does when the run starts (or when it is ready during the run).
    func start(_ peer: Peer) {
        switch peer.role {
        case .presser: startCycle(peer)
        case .host: arm(peer, resetFirst: false)
        case .player, .observer, .member, .idler: break
        }
    }

    private var buzzerGroup: String {
        guard let table = plan.panels[0].table, let b = plan.panels[0].pressButtons.first else { return "-" }
        return table.groupNames[table.groups[Int(b)]]
    }

    private func buttonID(_ peer: Peer, _ b: Int32) -> String {
        plan.panels[peer.panel].table?.ids[Int(b)] ?? "-"
    }

    private func command(_ peer: Peer, _ line: String) {
        let panel = plan.panels[peer.panel].id
        let words = line.split(separator: " ").map(String.init)
        if peer.role == .host, words[0] != "DOWN" { peer.pendingOKs += 1 }
        // Stamped at its write (`ArrivalOrder`).
        if peer.role == .player, words[0] == "DOWN" { peer.downPending = true }
        switch peer.transport {
        case .line:
            send(peer, Array("\(words[0]) \(panel)\(words.count > 1 ? " " + words[1...].joined(separator: " ") : "")\n".utf8))
        case .webSocket:
            var json = #"{"cmd":"\#(words[0].lowercased())","panel":"\#(panel)""#
            if words[0] == "ARM" { json += #","group":"\#(words[1])""# }
            if words[0] == "DOWN" { json += #","button":"\#(words[1])""# }
            var frame: [UInt8] = []
            peer.ws?.appendText(Array((json + "}").utf8), to: &frame)
            send(peer, frame)
        case .redis:
            break
        }
    }

    /// The host ends the round (if any) and opens the next; in between the group is
    /// closed, and the host's own DOWN then must be denied.
    func arm(_ peer: Peer, resetFirst: Bool) {
        if resetFirst {
            command(peer, "RESET")
            peer.button = plan.panels[peer.panel].pressButtons[0]
            command(peer, "DOWN \(buttonID(peer, peer.button))")
        }
        peer.step = .awaitingDown
        // Before the ARM leaves: a player presses only once it has read the ARMED, so
        // each answer counted from here on is to a press of this round.
        let panel = plan.panels[peer.panel]
        panel.roundNumber.wrappingAdd(1, ordering: .relaxed)
        panel.roundAnswers.store(0, ordering: .relaxed)
        peer.answersSeen = 0
        command(peer, "ARM \(buzzerGroup)")
        peer.roundMovedAt = now
        schedule(peer, afterNanos: Engine.roundPatience)
    }

    /// The host, once per engine turn: the round moved if more players have their answer,
    /// and it is over once every player has. Players on other engines count into the same
    /// atomic, which this turn reads at most a poll's wait (20 ms) late.
    func hostTurn(_ peer: Peer) {
        guard peer.step == .awaitingDown, control.phase == .running else { return }
        let answers = plan.panels[peer.panel].roundAnswers.load(ordering: .relaxed)
        guard answers != peer.answersSeen else { return }
        peer.answersSeen = answers
        peer.roundMovedAt = now
        guard answers >= plan.options.connectionCount else { return }
        if measuring { stats.rounds += 1 }
        arm(peer, resetFirst: true)
    }

    /// A player's answer to its press (GRANTED or RANKED), counted for the host if the
    /// round it pressed in is still the newest: an answer to a round given up meanwhile
    /// (cluster mode) must not complete the next one.
    private func countAnswer(_ peer: Peer) {
        let panel = plan.panels[peer.panel]
        guard peer.pressRound == panel.roundNumber.load(ordering: .relaxed) else { return }
        peer.answeredRound = peer.pressRound
        panel.roundAnswers.wrappingAdd(1, ordering: .relaxed)
    }

    /// How long an open round may go without a press before the host gives it up; a
    /// round of 30 players ends within about 100 ms.
    static let roundPatience = 2 * LoadClock.second

    /// A player locked out presses again after this: above the default `early_lockout_ms`
    /// (250), well below `roundPatience`.
    static let lockoutWait = 300 * LoadClock.millisecond

    /// The host's timer in an open round. Across nodes a press can go with a fault (its
    /// player's node paused through the round and rejoined after the ARMED, a DOWN
    /// refused `unavailable` twice, a DOWN that met the RESET of a round given up): the
    /// round would wait for it for ever, so after `roundPatience` without a press the host
    /// closes it and opens the next (`abandoned_rounds`). On one node every press is
    /// answered, and a round given up is an error.
    func roundStalled(_ peer: Peer) {
        guard control.phase == .running else { return }
        let quiet = now &- peer.roundMovedAt
        if quiet < Engine.roundPatience { return schedule(peer, afterNanos: Engine.roundPatience - quiet) }
        if stats.abandonSamples.count < 5 { stats.abandonSamples.append(missingPressers(peer)) }
        if plan.options.targets.count > 1 {
            if measuring { stats.abandonedRounds += 1 }
        } else {
            stats.error("\(peer.name): a round had \(peer.answersSeen) of \(plan.options.connectionCount) presses answered and no more for 2 s; opened again")
        }
        arm(peer, resetFirst: true)
    }

    /// The players of this engine without an answer in the round given up, with their
    /// step and last reply: what a report of it needs.
    private func missingPressers(_ host: Peer) -> String {
        let round = plan.panels[host.panel].roundNumber.load(ordering: .relaxed)
        let missing = peers.filter { $0.role == .player && $0.panel == host.panel && $0.answeredRound != round }
        let at = now
        let seconds = { (t: UInt64) in String(format: "%.3f", Double(at &- t) / 1e9) }
        return "a round with \(host.answersSeen) presses, given up: "
            + missing.prefix(5).map { p in
                let last =
                    p.lastReplyAt == 0
                    ? "none"
                    : "\(p.lastReply.kind.verb)\(p.lastReply.error == .none ? "" : " \(p.lastReply.error)")\(p.lastReply.reason == .none ? "" : " reason=\(p.lastReply.reason.word)") \(seconds(p.lastReplyAt)) s ago"
                return "\(p.name) s\(p.session) \(p.step), last reply \(last), last DOWN \(seconds(p.sentAt)) s ago"
            }.joined(separator: "; ")
    }

    /// A player's one press of the open round (on ARMED, or again after `unavailable`).
    private func pressInRound(_ peer: Peer, again: Bool) {
        if !again {
            let buttons = plan.panels[peer.panel].pressButtons
            peer.button = buttons[peer.random.below(buttons.count)]
        }
        peer.step = .awaitingDown
        peer.pressRound = plan.panels[peer.panel].roundNumber.load(ordering: .relaxed)
        peer.downsInFlight += 1
        peer.sentAt = LoadClock.now()
        // Stored before the DOWN leaves, so an observer's BUZZED always finds it.
        if peer.roundSeq >= 0 { plan.panels[peer.panel].presses.store(session: peer.session, round: peer.roundSeq, sentAt: peer.sentAt) }
        command(peer, "DOWN \(buttonID(peer, peer.button))")
    }

    /// A player's DOWN refused while its round may still be open: the timer presses again
    /// (`pressAgain`) unless a CLOSED, an ARMED or a new term comes first. Draining: idle.
    private func pressAgainLater(_ peer: Peer, afterNanos delay: UInt64) {
        guard control.phase == .running else { peer.step = .idle; return }
        peer.step = .retryingDown
        schedule(peer, afterNanos: delay)
    }

    /// A player's timer: its DOWN met no leader able to decide, and the round it was for
    /// may still be open (no CLOSED, ARMED or new term since): it presses again.
    func pressAgain(_ peer: Peer) {
        guard control.phase == .running else { peer.step = .idle; return }
        pressInRound(peer, again: true)
    }

    func drainHost(_ peer: Peer) {
        // The last winner still holds its button: a final RESET lets every button go idle.
        peer.step = .awaitingUp
        command(peer, "RESET")
    }

    func fairEvent(_ peer: Peer, _ m: WireMessage) {
        switch (peer.role, m.kind) {
        case (.player, .armed):
            peer.armedSeen += 1
            guard control.phase == .running, peer.step == .idle || peer.step == .retryingDown else { return }
            peer.timerGeneration &+= 1
            peer.roundSeq = m.seq
            pressInRound(peer, again: false)
        case (.observer, .armed):
            peer.roundSeq = m.seq
        case (.observer, .buzzed):
            // press -> an announced place told to a member: the player's DOWN to this
            // observer's BUZZED, fanned out to every member.
            if measuring, let sent = plan.panels[peer.panel].presses.sentAt(session: m.session, round: peer.roundSeq), now >= sent {
                stats.event.record(now - sent)
            }
        case (.player, .closed):
            // The round a press was to be sent again for is over.
            if peer.step == .retryingDown {
                peer.timerGeneration &+= 1
                peer.step = .idle
            }
        case (.host, .pressed), (.host, .buzzed):
            if m.button >= 0, plan.panels[peer.panel].pressButtons.contains(m.button) { peer.roundMovedAt = now }
        default:
            break
        }
    }

    func fairReply(_ peer: Peer, _ m: WireMessage, _ raw: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) {
        if peer.role == .player {
            peer.lastReply = m
            peer.lastReplyAt = now
            if measuring, m.kind == .granted || m.kind == .ranked {
                stats.arrivals.record(round: peer.armedSeen, sentAt: peer.downWrittenAt, rank: m.kind == .granted ? 1 : m.rank)
            }
        }
        if peer.role == .player, m.kind == .granted || m.kind == .ranked || m.kind == .denied || m.kind == .error {
            // Every press gets exactly one answer: this one must answer a DOWN in flight.
            guard peer.downsInFlight > 0 else {
                return stats.error("\(peer.name): an answer with no DOWN awaiting one (a second answer?): \(Engine.text(raw, range))")
            }
            peer.downsInFlight -= 1
        }
        switch (peer.role, m.kind) {
        case (.player, .granted):
            // The winner holds until the host's RESET (or the next ARM) ends the round.
            recordReply(peer)
            countAnswer(peer)
            if measuring { stats.grants += 1 }
            peer.fence = m.fence
            peer.grantEnded = false
            peer.step = .idle
        case (.player, .ranked):
            // press -> RANKED: the player's own place, whether or not members are told it.
            recordReply(peer)
            countAnswer(peer)
            if measuring { stats.ranked += 1 }
            peer.step = .idle
        case (.player, .denied) where m.reason == .early && control.phase != .running:
            // The run is draining: the host's last RESET came before this press.
            peer.step = .idle
        case (.host, .denied) where m.reason == .early || m.reason == .lockedOut:
            if measuring { stats.earlyDenied += 1 }
        case (.host, .okOther):
            // OK ARM, OK RESET; the final RESET's ends the host's part in the run.
            peer.pendingOKs -= 1
            if peer.step == .awaitingUp, peer.pendingOKs == 0 { peer.step = .idle }
        case (.player, .error) where m.error == .unavailable && plan.options.targets.count > 1:
            // Cluster mode: no leader could decide the DOWN. After a failover the round
            // is gone (the new term's snapshot says so, and the player then waits for the
            // next ARMED); a lapse of this node's lease leaves it open: pressed again.
            recordReply(peer)
            if measuring { stats.unavailable += 1 }
            pressAgainLater(peer, afterNanos: UInt64(100 + peer.random.below(100)) * LoadClock.millisecond)
        case (.player, .denied) where m.reason == .early && plan.options.targets.count > 1:
            // Cluster mode: a DOWN sent again, or relayed across a failover, found its
            // round closed (the host gave it up, or the new term's rounds start closed).
            // It locks the player out for `early_lockout_ms`.
            recordReply(peer)
            if measuring { stats.earlyDenied += 1 }
            peer.step = .idle
        case (.player, .denied) where m.reason == .lockedOut && plan.options.targets.count > 1:
            // The next round's ARMED came within that lockout: pressed again once it is
            // over (the default is 250 ms), while no CLOSED ends the round first. Before,
            // the player waited for the next ARMED and the round was given up (nemesis
            // seed 75: "c8 idle, last reply DENIED reason=locked-out 2.044 s ago").
            recordReply(peer)
            if measuring { stats.earlyDenied += 1 }
            pressAgainLater(peer, afterNanos: Engine.lockoutWait)
        case (.host, .error) where m.error == .unavailable && plan.options.targets.count > 1:
            // Cluster mode: an ARM, RESET or the closed-round DOWN met no leader; the host
            // opens the round again shortly (the last such answer's timer wins).
            peer.pendingOKs = max(0, peer.pendingOKs - 1)
            if measuring { stats.unavailable += 1 }
            if control.phase == .running {
                peer.step = .retryingDown
                schedule(peer, afterNanos: UInt64(100 + peer.random.below(100)) * LoadClock.millisecond)
            }
        case (.host, .granted), (.host, .ranked):
            stats.error("\(peer.name): a DOWN sent while the round was closed was accepted: \(Engine.text(raw, range))")
        default:
            stats.error("\(peer.name): \(Engine.text(raw, range))")
            if stats.errors > 1000 { return control.abort("more than 1000 error replies; first: \(stats.errorSamples.first ?? "")") }
        }
    }

    /// Whether the snapshot just read shows the player's round open without its rank;
    /// forgets it for the next snapshot.
    private func roundOpenForPlayer(_ peer: Peer) -> Bool {
        defer {
            peer.snapshotRoundOpen = false
            peer.snapshotRanked = false
        }
        return peer.role == .player && peer.snapshotRoundOpen && !peer.snapshotRanked
    }

    /// A player's first snapshot on a connection (the run's start, or a node that died
    /// and another that took the connection over): a round already open is pressed in,
    /// or it would be given up for want of this player.
    func playerJoined(_ peer: Peer) {
        if roundOpenForPlayer(peer), control.phase == .running, peer.step == .idle {
            peer.roundSeq = -1
            pressInRound(peer, again: false)
        }
    }

    /// A player's ROUND and RANK snapshot lines (they come before its `OK JOIN`).
    func snapshotLine(_ peer: Peer, _ m: WireMessage) {
        guard let table = plan.panels[peer.panel].table, let b = plan.panels[peer.panel].pressButtons.first else { return }
        let group = table.groups[Int(b)]
        if m.kind == .roundState, Int(m.group) == group {
            peer.snapshotRoundOpen = m.round == .armed || m.round == .won
            peer.snapshotRanked = false
        } else if m.kind == .rankState, m.button >= 0, table.groups[Int(m.button)] == group, m.session == peer.session {
            peer.snapshotRanked = true
        }
    }

    /// Cluster mode: a snapshot the node sent unasked. A new term's rounds are closed (the
    /// old leader's core is gone, and with it the round and its ranking): the players wait
    /// for the next ARMED, the host opens the next round. In either kind of snapshot, a
    /// round shown open without the player's rank is one whose ARMED it missed.
    func buzzSnapshot(_ peer: Peer, _ m: WireMessage) {
        let pressNow = roundOpenForPlayer(peer)
        guard m.term != peer.term else {
            // A snapshot its node sent in the same term (a resync after a lapse or a link
            // drop) may stand for an ARMED this player never read: the round is open and
            // does not rank it, so it presses now. Before, it waited for the next ARMED
            // and the round was given up (seed 71: "c22 idle, last DOWN 5.990 s ago").
            if pressNow, control.phase == .running, peer.step == .idle || peer.step == .retryingDown {
                peer.timerGeneration &+= 1
                peer.roundSeq = -1
                pressInRound(peer, again: false)
            }
            return
        }
        peer.term = m.term
        switch peer.role {
        case .player:
            peer.timerGeneration &+= 1
            peer.step = .idle
            // A new term's rounds start closed; one already open when this node joined
            // the new leader (its ARMED came first) is pressed in at once.
            if pressNow, control.phase == .running {
                peer.roundSeq = -1
                pressInRound(peer, again: false)
            }
        case .host:
            if control.phase == .running { arm(peer, resetFirst: true) }
        case .presser, .observer, .member, .idler:
            break
        }
    }
}
