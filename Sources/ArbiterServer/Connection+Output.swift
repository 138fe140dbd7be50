import ArbiterIO
import ArbiterWire

extension Connection {
    /// Appends output built by `body` while holding the lock, enforcing the bound.
    /// `body` writes message lines in the connection's event form; on a WebSocket each
    /// becomes a text frame, unless `raw` (control frames, HTTP bytes).
    func append(raw: Bool = false, epoch: UInt64 = 0, stampMs: Int64 = 0, _ body: (inout [UInt8], WireFormat) -> Void) -> AppendOutcome {
        withLock {
            guard acceptsAppend else { return .dropped }
            if replyOrder.kicksAwaited > 0, !raw { return holdForKick(held(body)) }
            add(raw: raw, epoch: epoch, stampMs: stampMs, body)
            return appended()
        }
    }

    /// An answer this node gives the session itself (`ReplyOrder`): it waits behind the
    /// replies still owed for commands relayed before it.
    func appendReply(epoch: UInt64 = 0, stampMs: Int64 = 0, _ body: (inout [UInt8], WireFormat) -> Void) -> AppendOutcome {
        withLock {
            guard acceptsAppend else { return .dropped }
            if replyOrder.isHolding { return hold(held(body)) }
            add(raw: false, epoch: epoch, stampMs: stampMs, body)
            return appended()
        }
    }

    /// Whether replies of relayed commands are still owed before this node's next answer.
    var awaitsRelayedReplies: Bool { withLock { replyOrder.isHolding } }

    /// A slot for the reply of a command this node relays (`ReplyOrder`): until that
    /// reply is written, this node's own later answers wait behind it.
    func reserveReplySlot() -> UInt64 {
        withLock { replyOrder.reserve() }
    }

    /// The slot of a `KICK` asked of another node (`ReplyOrder.reserveKick`).
    func reserveKickSlot() -> UInt64 {
        withLock { replyOrder.reserveKick() }
    }

    /// The reply of a relayed command, written at once; the answers that waited for it
    /// follow once every earlier slot is answered too. While a `KICK` waits, all of it
    /// waits behind that (`ReplyOrder.kicksAwaited`), unless it is that KICK's answer
    /// (`kick`), which then lets out what waited.
    func fillReplySlot(
        _ token: UInt64, kick: Bool = false, epoch: UInt64 = 0, stampMs: Int64 = 0, _ body: (inout [UInt8], WireFormat) -> Void
    ) -> AppendOutcome {
        withLock {
            guard acceptsAppend else { return .dropped }
            if !kick, replyOrder.kicksAwaited > 0 {
                var bytes = held(body)
                if let due = replyOrder.answered(token) { bytes += due }
                return holdForKick(bytes)
            }
            add(raw: false, epoch: epoch, stampMs: stampMs, body)
            if let due = replyOrder.answered(token), !due.isEmpty { appendingOutput { $0 += due } }
            if kick {
                let behind = replyOrder.kickAnswered()
                if !behind.isEmpty { appendingOutput { $0 += behind } }
            }
            return appended()
        }
    }

    /// Under the lock: what `body` writes, rendered as it would go out, to be held.
    private func held(_ body: (inout [UInt8], WireFormat) -> Void) -> [UInt8] {
        var bytes: [UInt8] = []
        Connection.render(body, format: eventFormat, frames: framing == .websocket, into: &bytes)
        return bytes
    }

    /// Under the lock: output kept behind a `KICK` still awaited. Past the outbound bound,
    /// the peer is cut like one that does not read.
    @inline(never)
    private func holdForKick(_ bytes: [UInt8]) -> AppendOutcome {
        replyOrder.holdForKick(bytes)
        return replyOrder.heldBytes > outboundLimit ? .overflow : .queued
    }

    /// Under the lock: an answer kept behind a waiting slot. Past the outbound bound, the
    /// peer is cut like one that does not read.
    @inline(never)
    private func hold(_ bytes: [UInt8]) -> AppendOutcome {
        replyOrder.hold(bytes)
        return replyOrder.heldBytes > outboundLimit ? .overflow : .queued
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
            if replyOrder.isHolding {
                let held = replyOrder.releaseAll()
                appendingOutput { $0 += held }
            }
            add(raw: raw, epoch: epoch, stampMs: stampMs, body)
            return sealed(after: appended())
        }
    }

    /// Under the lock. `epoch`: the lease epoch the output is made under (cluster mode),
    /// kept for the oldest unsent output (`Channel.leaseEpoch`).
    @inline(__always) private func add(raw: Bool, epoch: UInt64, stampMs: Int64, _ body: (inout [UInt8], WireFormat) -> Void) {
        if epoch != 0 { markLeaseEpoch(epoch, stampMs: stampMs) }
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
