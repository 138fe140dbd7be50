import ArbiterIO
import ArbiterWire

extension Connection {
    /// Appends output built by `body` while holding the lock, enforcing the bound.
    /// `body` writes message lines in the connection's event form; on a WebSocket each
    /// becomes a text frame, unless `raw` (control frames, HTTP bytes).
    func append(raw: Bool = false, _ body: (inout [UInt8], WireFormat) -> Void) -> AppendOutcome {
        withLock {
            guard acceptsAppend else { return .dropped }
            if holdsReplies {
                // `body` is called here rather than handed on: passed to a function that
                // is not inlined, every append would have to build the closure's context
                // (about 130 instructions per DOWN/UP on one node, where nothing is held).
                var bytes: [UInt8] = []
                body(&bytes, eventFormat)
                if framing == .websocket && !raw { Connection.frameLines(&bytes, from: 0) }
                return hold(bytes)
            }
            add(raw: raw, body)
            return appended()
        }
    }

    /// A slot for the reply of a command this node relays (`ReplyOrder`): until it is
    /// filled, later output waits behind it.
    func reserveReplySlot() -> UInt64 {
        withLock {
            holdsReplies = true
            return replyOrder.reserve()
        }
    }

    /// The reply of a relayed command, into its slot: written with whatever waited behind
    /// it once every earlier slot is filled too. A slot given up meanwhile (last words)
    /// leaves the reply to be written as any output.
    func fillReplySlot(_ token: UInt64, _ body: (inout [UInt8], WireFormat) -> Void) -> AppendOutcome {
        withLock {
            guard acceptsAppend else { return .dropped }
            let reply = rendered(raw: false, body)
            guard let due = replyOrder.fill(token, with: reply) else {
                if holdsReplies { return hold(reply) }
                appendingOutput { $0 += reply }
                return appended()
            }
            holdsReplies = replyOrder.isHolding
            guard !due.isEmpty else { return replyOrder.heldBytes > outboundLimit ? .overflow : .queued }
            appendingOutput { $0 += due }
            return appended()
        }
    }

    /// Under the lock: output kept behind a waiting slot. Past the outbound bound, the
    /// peer is cut like one that does not read.
    @inline(never)
    private func hold(_ bytes: [UInt8]) -> AppendOutcome {
        replyOrder.hold(bytes)
        return replyOrder.heldBytes > outboundLimit ? .overflow : .queued
    }

    /// Under the lock: the bytes `add` would append.
    private func rendered(raw: Bool, _ body: (inout [UInt8], WireFormat) -> Void) -> [UInt8] {
        var bytes: [UInt8] = []
        body(&bytes, eventFormat)
        if framing == .websocket && !raw { Connection.frameLines(&bytes, from: 0) }
        return bytes
    }

    /// Appends the connection's last output and, in the same step under the lock, stops
    /// accepting more and marks it to close once written. The reactor calls it right
    /// after its state machine moved to `closing`: no flush on another thread can write
    /// the last words and miss that it must close.
    func appendLast(raw: Bool = false, _ body: (inout [UInt8], WireFormat) -> Void) -> AppendOutcome {
        withLock {
            guard acceptsOutput else { return .dropped }
            guard acceptsAppend else { return sealed(after: .dropped) }
            // Last words go after everything held: the replies still awaited never come.
            if holdsReplies {
                let held = replyOrder.releaseAll()
                holdsReplies = false
                appendingOutput { $0 += held }
            }
            add(raw: raw, body)
            return sealed(after: appended())
        }
    }

    /// Under the lock.
    @inline(__always) private func add(raw: Bool, _ body: (inout [UInt8], WireFormat) -> Void) {
        let format = eventFormat
        let frames = framing == .websocket && !raw
        appendingOutput { bytes in
            let start = bytes.count
            body(&bytes, format)
            if frames { Connection.frameLines(&bytes, from: start) }
        }
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
