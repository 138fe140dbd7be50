import ArbiterIO
import ArbiterWire

extension Connection {
    /// Appends output built by `body` while holding the lock, enforcing the bound.
    /// `body` writes message lines in the connection's event form; on a WebSocket each
    /// becomes a text frame, unless `raw` (control frames, HTTP bytes). `panel`: the panel
    /// whose output it is (`ReplyOrder`), nil for output of none.
    func append(raw: Bool = false, panel: Int? = nil, epoch: UInt64 = 0, stampMs: Int64 = 0, _ body: (inout [UInt8], WireFormat) -> Void)
        -> AppendOutcome
    {
        withLock {
            guard acceptsAppend else { return .dropped }
            if raw {
                add(raw: true, epoch: epoch, stampMs: stampMs, body)
                return appended()
            }
            return put(.event(panel: panel), epoch: epoch, stampMs: stampMs, body)
        }
    }

    /// An answer this node gives the session itself (`ReplyOrder`): it waits behind the
    /// replies still owed for commands relayed before it. `panel`: the panel whose reply
    /// it is, if this node decides it: that panel's later output follows it.
    func appendReply(panel: Int? = nil, epoch: UInt64 = 0, stampMs: Int64 = 0, _ body: (inout [UInt8], WireFormat) -> Void) -> AppendOutcome {
        withLock {
            guard acceptsAppend else { return .dropped }
            return put(.answer(panel: panel), epoch: epoch, stampMs: stampMs, body)
        }
    }

    /// Whether replies of relayed commands are still owed before this node's next answer.
    var awaitsRelayedReplies: Bool { withLock { replyOrder.isHolding } }

    /// A slot for the reply of a command this node relays (`ReplyOrder`): until that
    /// reply is written, this node's own later answers wait behind it.
    package func reserveReplySlot() -> UInt64 {
        let now = reactor.server.clock.now().milliseconds
        return withLock { replyOrder.reserve(at: now) }
    }

    /// The slot of a `KICK` asked of another node: until its answer is written, events
    /// wait behind it too.
    package func reserveKickSlot() -> UInt64 {
        let now = reactor.server.clock.now().milliseconds
        return withLock { replyOrder.reserve(kick: true, at: now) }
    }

    /// Answers every slot owed `limitMs` or more at `nowMs` (`ReplyOrder.overdue`) with
    /// `ERROR unavailable`, letting out what waited behind it; how many it answered.
    /// Only a bug elsewhere leaves one: without this, that connection would get no reply
    /// again.
    func giveUpOverdueReplies(at nowMs: Int64, limitMs: Int64) -> (count: Int, outcome: AppendOutcome) {
        withLock {
            guard acceptsAppend, replyOrder.isHolding else { return (0, .queued) }
            var count = 0
            var outcome = AppendOutcome.queued
            while count < 64, let token = replyOrder.overdue(at: nowMs, limitMs: limitMs) {
                count += 1
                let seconds = limitMs / 1000
                let this = put(.reply(token: token, panel: nil), epoch: 0, stampMs: 0) { out, format in
                    MessageEncoder.encode(
                        .error(.unavailable, "no answer came within \(seconds) s; it may or may not have been done; try again"), format: format,
                        into: &out)
                }
                // The first that asks for a flush or a cut is the one to act on.
                if case .queued = outcome { outcome = this }
                if case .overflow = this { return (count, this) }
            }
            return (count, outcome)
        }
    }

    /// The reply of a relayed command (or of a `KICK` asked of another node), into its
    /// slot: it goes out once every earlier slot's reply has, and what waited for it
    /// follows (`ReplyOrder`). `panel`: the panel that answered, nil for a KICK.
    func fillReplySlot(_ token: UInt64, panel: Int?, epoch: UInt64 = 0, stampMs: Int64 = 0, _ body: (inout [UInt8], WireFormat) -> Void)
        -> AppendOutcome
    {
        withLock {
            guard acceptsAppend else { return .dropped }
            return put(.reply(token: token, panel: panel), epoch: epoch, stampMs: stampMs, body)
        }
    }

    /// Under the lock: `output` written now if nothing must go before it, else kept in
    /// `replyOrder`; either way what became due follows.
    @inline(__always) private func put(
        _ output: ReplyOrder.Output, epoch: UInt64, stampMs: Int64, _ body: (inout [UInt8], WireFormat) -> Void
    ) -> AppendOutcome {
        if replyOrder.passesStraight(output) {
            add(raw: false, epoch: epoch, stampMs: stampMs, body)
            if replyOrder.isHolding { release(replyOrder.wentStraight(output)) }
            return appended()
        }
        return keep(output, held(body), epoch: epoch, stampMs: stampMs)
    }

    /// Under the lock: output that must wait (`ReplyOrder.route`). Past the outbound
    /// bound, the peer is cut like one that does not read.
    @inline(never)
    private func keep(_ output: ReplyOrder.Output, _ bytes: [UInt8], epoch: UInt64, stampMs: Int64) -> AppendOutcome {
        let due = replyOrder.route(output, bytes, epoch: epoch, stampMs: stampMs)
        if replyOrder.heldBytes > outboundLimit { return .overflow }
        guard !due.bytes.isEmpty else { return .queued }
        release(due)
        return appended()
    }

    /// Under the lock: kept output now due, marked with the oldest lease epoch and time
    /// limit of what it holds (`FlushList.outputStampMs`): a leader's frame that waited
    /// here past the limit may have been overtaken (the leader may have counted this node
    /// gone meanwhile), and goes out as stale output does: not at all, the client
    /// reconnecting to the truth. Output waits here a round trip or so; past the limit,
    /// something is wrong anyway.
    private func release(_ due: ReplyOrder.Released) {
        guard !due.bytes.isEmpty else { return }
        if due.epoch != 0 { markOutputEpoch(due.epoch, stampMs: due.stampMs) }
        appendingOutput { $0 += due.bytes }
    }

    /// Under the lock: what `body` writes, rendered as it would go out, to be held.
    private func held(_ body: (inout [UInt8], WireFormat) -> Void) -> [UInt8] {
        var bytes: [UInt8] = []
        Connection.render(body, format: eventFormat, frames: framing == .websocket, into: &bytes)
        return bytes
    }

    /// Appends the connection's last output and, in the same step under the lock, stops
    /// accepting more and marks it to close once written. The reactor calls it right
    /// after its state machine moved to `closing`: no flush on another thread can write
    /// the last words and miss that it must close.
    func appendLast(raw: Bool = false, epoch: UInt64 = 0, stampMs: Int64 = 0, _ body: (inout [UInt8], WireFormat) -> Void) -> AppendOutcome {
        withLock {
            guard acceptsOutput else { return .dropped }
            guard acceptsAppend else { return sealed(after: .dropped) }
            // Last words go after everything held: the replies still awaited never come.
            if replyOrder.isHolding { release(replyOrder.releaseAll()) }
            add(raw: raw, epoch: epoch, stampMs: stampMs, body)
            return sealed(after: appended())
        }
    }

    /// Under the lock. `epoch`: the lease epoch the output is made under (cluster mode),
    /// kept for the oldest unsent output (`Channel.outputEpoch`).
    @inline(__always) private func add(raw: Bool, epoch: UInt64, stampMs: Int64, _ body: (inout [UInt8], WireFormat) -> Void) {
        if epoch != 0 { markOutputEpoch(epoch, stampMs: stampMs) }
        let format = eventFormat
        let frames = framing == .websocket && !raw
        appendingOutput { Connection.render(body, format: format, frames: frames, into: &$0) }
    }

    /// Appends what `body` writes to `bytes`, each line a WebSocket text frame if `frames`.
    @inline(__always) private static func render(
        _ body: (inout [UInt8], WireFormat) -> Void, format: WireFormat, frames: Bool, into bytes: inout [UInt8]
    ) {
        let start = bytes.count
        body(&bytes, format)
        if frames { frameLines(&bytes, from: start) }
    }

    /// Turns the lines appended from `start` into one WebSocket text frame each.
    static func frameLines(_ out: inout [UInt8], from start: Int) {
        guard start < out.count else { return }
        let lines = Array(out[start...])
        out.removeSubrange(start...)
        var lineStart = 0
        for i in lines.indices where lines[i] == 0x0A {
            WebSocketFrameEncoder.encode(opcode: .text, payload: lines[lineStart..<i], into: &out)
            lineStart = i + 1
        }
    }
}
