/// Keeps one connection's output in the orders PROTOCOL.md promises when some of its
/// commands are answered by other nodes (cluster mode), where answers can arrive in any
/// order:
/// - replies come in the order of the commands ("Replies to one connection come in the
///   order of its commands"), whichever node answers first;
/// - one panel's events keep the order they were made in (`seq`), a reply precedes the
///   events made after it (those its command causes), and nothing waits behind a
///   snapshot it is counted in (an event held behind a re-JOIN would land after it);
/// - while a `KICK` asked of another node is unanswered, events wait behind its answer:
///   the `RELEASED ... reason=disconnect` and `LEFT` it causes come from the panels'
///   leaders and could overtake the answer of the kicked session's node.
///
/// A command answered later (relayed to a leader, or a `KICK` asked of another node)
/// takes a *unit*, in command order. Output that may not go out yet is kept in the unit
/// it must follow, behind that unit's reply, and goes out once every unit up to it is
/// answered. What goes out at once: a reply whose unit is first, an event of a panel
/// with nothing kept (and no KICK awaited), and anything while no unit waits, which is
/// always the case on a single node. Owned by the connection's lock.
struct ReplyOrder {
    /// What a piece of output is, for the order it keeps. `panel` is the panel's index
    /// (`PanelHost.index`), nil for output of no panel.
    enum Output {
        /// Output that answers no command of this session: an event, a snapshot, a
        /// queue's hand-off, a failover release.
        case event(panel: Int?)
        /// The answer of a command this node answers at once (`PONG`, an error found
        /// here, the reply of a panel this node decides).
        case answer(panel: Int?)
        /// The reply of the command that took unit `token`.
        case reply(token: UInt64, panel: Int?)
    }

    /// Output let out, in order, with the oldest lease epoch it was made under and the
    /// oldest time limit among it (0: none; `FlushList.outputEpoch`, `outputStampMs`).
    struct Released {
        var bytes: [UInt8] = []
        var epoch: UInt64 = 0
        var stampMs: Int64 = 0

        mutating func take(_ bytes: [UInt8], epoch: UInt64, stampMs: Int64) {
            // Usually nothing: a reply that went straight leaves its unit empty.
            if !bytes.isEmpty { self.bytes += bytes }
            self.epoch = ReplyOrder.older(self.epoch, epoch)
            self.stampMs = ReplyOrder.older(self.stampMs, stampMs)
        }
    }

    private struct Unit {
        let token: UInt64
        let isKick: Bool
        /// When it was taken, on the server clock (0: not known).
        let reservedAtMs: Int64
        var answered = false
        var reply: [UInt8] = []
        /// What must follow the reply: answers of later commands, kept panel output.
        var after: [UInt8] = []
        /// The oldest lease epoch and time limit of what is kept here (0: none).
        var epoch: UInt64 = 0
        var stampMs: Int64 = 0
    }

    private var units: [Unit] = []
    /// For a panel with output kept: the unit it is kept in, where its later output goes.
    private var anchors: [Int: UInt64] = [:]
    private var nextToken: UInt64 = 1
    /// Bytes kept, for the connection's outbound bound.
    private(set) var heldBytes = 0
    /// `KICK`s of sessions on other nodes whose answers have not gone out.
    private(set) var kicksAwaited = 0

    var isHolding: Bool { !units.isEmpty }

    /// A unit for the reply of a command about to be relayed, or of a `KICK` asked of
    /// another node (`kick`), taken at `nowMs`.
    mutating func reserve(kick: Bool = false, at nowMs: Int64 = 0) -> UInt64 {
        let token = nextToken
        nextToken += 1
        units.append(Unit(token: token, isKick: kick, reservedAtMs: nowMs))
        if kick { kicksAwaited += 1 }
        return token
    }

    /// Whether `output` may go out at once, as it is: then the caller writes it without a
    /// copy and tells `wentStraight`.
    @inline(__always) func passesStraight(_ output: Output) -> Bool {
        guard let first = units.first else { return true }
        switch output {
        case .event(let panel): return kicksAwaited == 0 && !hasKept(panel)
        case .answer: return false
        // Its unit is first: whatever waits in it comes after the reply.
        case .reply(let token, _): return first.token == token
        }
    }

    /// `output` went out at once: for the first unit's reply, what waited behind it and
    /// is now due.
    mutating func wentStraight(_ output: Output) -> Released {
        guard case .reply(let token, _) = output, units.first?.token == token else { return Released() }
        units[0].answered = true
        return drain()
    }

    /// `output` that may not go out at once (`passesStraight`): kept where it belongs.
    /// Returns what may go out now, in order; `bytes` among it if they are due.
    mutating func route(_ output: Output, _ bytes: [UInt8], epoch: UInt64, stampMs: Int64 = 0) -> Released {
        switch output {
        case .event(let panel):
            guard let index = keepingIndex(for: panel) else { return Released(bytes: bytes, epoch: epoch, stampMs: stampMs) }
            keep(bytes, epoch: epoch, stampMs: stampMs, in: index, panel: panel)
            return Released()
        case .answer(let panel):
            guard !units.isEmpty else { return Released(bytes: bytes, epoch: epoch, stampMs: stampMs) }
            // After every unit so far: its command came after all of theirs.
            keep(bytes, epoch: epoch, stampMs: stampMs, in: units.count - 1, panel: panel)
            return Released()
        case .reply(let token, let panel):
            // A unit already given up (the connection's last words): as any output.
            guard let index = units.firstIndex(where: { $0.token == token }) else {
                return route(.event(panel: panel), bytes, epoch: epoch, stampMs: stampMs)
            }
            units[index].answered = true
            units[index].reply = bytes
            units[index].epoch = Self.older(units[index].epoch, epoch)
            units[index].stampMs = Self.older(units[index].stampMs, stampMs)
            heldBytes += bytes.count
            // The panel's later output follows this reply, unless it already waits further
            // on (behind a KICK): then it stays there. An event kept behind a KICK that its
            // leader made before this reply thus comes after it, as one node would have
            // written them: this command came before the KICK.
            if let panel, (keptIndex(of: panel) ?? -1) < index { anchors[panel] = token }
            return drain()
        }
    }

    /// The first unit still unanswered that was taken `limitMs` or more before `nowMs`:
    /// its answer is owed far longer than any wait the cluster allows (a relayed
    /// command's answer deadline, a JOIN's wait for a leader, a KICK's), so a path lost
    /// it, and everything behind it would wait for ever (`Reactor.swept` answers it).
    func overdue(at nowMs: Int64, limitMs: Int64) -> UInt64? {
        units.first { !$0.answered && $0.reservedAtMs > 0 && nowMs - $0.reservedAtMs >= limitMs }?.token
    }

    /// Gives up on every unit (the connection says its last words): what was kept, in
    /// order.
    mutating func releaseAll() -> Released {
        var out = Released()
        for unit in units {
            out.take(unit.reply, epoch: unit.epoch, stampMs: unit.stampMs)
            out.take(unit.after, epoch: unit.epoch, stampMs: unit.stampMs)
        }
        units.removeAll()
        anchors.removeAll()
        kicksAwaited = 0
        heldBytes = 0
        return out
    }

    // MARK: Helpers

    private func hasKept(_ panel: Int?) -> Bool {
        guard let panel else { return false }
        return anchors[panel] != nil
    }

    private func keptIndex(of panel: Int?) -> Int? {
        guard let panel, let token = anchors[panel] else { return nil }
        return units.firstIndex { $0.token == token }
    }

    /// The unit output of `panel` must wait in: behind the panel's kept output, and
    /// behind the last `KICK` awaited; nil when it need not wait.
    private func keepingIndex(for panel: Int?) -> Int? {
        let kick = kicksAwaited > 0 ? units.lastIndex(where: \.isKick) : nil
        guard let kept = keptIndex(of: panel) else { return kick }
        return max(kept, kick ?? kept)
    }

    private mutating func keep(_ bytes: [UInt8], epoch: UInt64, stampMs: Int64, in index: Int, panel: Int?) {
        units[index].after += bytes
        units[index].epoch = Self.older(units[index].epoch, epoch)
        units[index].stampMs = Self.older(units[index].stampMs, stampMs)
        heldBytes += bytes.count
        if let panel { anchors[panel] = units[index].token }
    }

    /// Lets out the answered units at the front.
    private mutating func drain() -> Released {
        var out = Released()
        while let first = units.first, first.answered {
            out.take(first.reply, epoch: first.epoch, stampMs: first.stampMs)
            out.take(first.after, epoch: first.epoch, stampMs: first.stampMs)
            heldBytes -= first.reply.count + first.after.count
            if first.isKick { kicksAwaited -= 1 }
            units.removeFirst()
            if !anchors.isEmpty { anchors = anchors.filter { $0.value != first.token } }
        }
        return out
    }

    /// Lease epochs and times only grow: the older of two is the smaller one that is set.
    static func older<T: FixedWidthInteger>(_ a: T, _ b: T) -> T {
        a == 0 ? b : (b == 0 ? a : min(a, b))
    }
}
