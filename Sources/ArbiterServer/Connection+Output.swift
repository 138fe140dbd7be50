import ArbiterIO
import ArbiterWire
import CSystem
import Synchronization

extension Connection {
    enum AppendOutcome {
        /// Added; already on someone's flush list.
        case queued
        /// Added; the caller must put the connection on its flush list.
        case needsFlush
        /// The peer is gone or not reading; nothing was added.
        case dropped
        /// This append passed the outbound bound: the peer must be disconnected.
        case overflow
        /// Added, and all peers together now have more unsent output than allowed:
        /// the caller flushes this one and sheds the largest backlogs.
        case overBudget
    }

    /// Appends output built by `body` while holding the lock, enforcing the bound.
    /// `body` writes message lines; on a WebSocket each becomes a text frame, unless
    /// `raw` (control frames, HTTP bytes).
    func append(raw: Bool = false, _ body: (inout [UInt8], WireFormat) -> Void) -> AppendOutcome {
        shared.withLock { s in
            guard s.gate.acceptsOutput else { return .dropped }
            return Connection.add(&s, raw: raw, budget: outputBudget, body)
        }
    }

    /// Appends the connection's last output and, in the same step under the lock, stops
    /// accepting more and marks it to close once written. The reactor calls it right
    /// after its state machine moved to `closing`: no flush on another thread can write
    /// the last words and miss that it must close.
    func appendLast(raw: Bool = false, _ body: (inout [UInt8], WireFormat) -> Void) -> AppendOutcome {
        shared.withLock { s in
            guard s.gate.acceptsOutput else { return .dropped }
            let outcome = Connection.add(&s, raw: raw, budget: outputBudget, body)
            s.gate = .draining
            switch outcome {
            case .queued, .needsFlush, .overBudget, .dropped:
                return outcome
            case .overflow:
                // Last words past the bound still go: the connection closes after them anyway.
                if s.dirty { return .queued }
                s.dirty = true
                return .needsFlush
            }
        }
    }

    private static func add(_ s: inout Shared, raw: Bool, budget: OutputBudget, _ body: (inout [UInt8], WireFormat) -> Void) -> AppendOutcome {
        if s.pending > s.outboundLimit { return .dropped }
        let start = s.output.bytes.count
        body(&s.output.bytes, s.eventFormat)
        if s.framing == .websocket, !raw { Connection.frameLines(&s.output.bytes, from: start) }
        if s.pending > s.outboundLimit { return .overflow }
        // Most replies leave at once: below one unit nothing is counted or looked up.
        let overBudget = (s.accounted != 0 || s.pending >= OutputBudget.unit) && budget.account(&s)
        if s.dirty { return overBudget ? .overBudget : .queued }
        s.dirty = true
        return overBudget ? .overBudget : .needsFlush
    }

    enum FlushOutcome {
        case done
        /// Everything is written and the connection asked to be closed afterwards.
        case closeNow
        /// The socket failed; the reactor will see it and close.
        case failed
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

    /// Writes pending output without blocking; what does not fit waits for EPOLLOUT.
    func flush() -> FlushOutcome {
        shared.withLock { s in
            s.dirty = false
            switch s.gate {
            case .open, .draining: break
            case .discarding, .closed: return .done
            }
            if s.output.waitingWritable { return .done }
            let outcome = Connection.write(&s, fd: fd, sink: sink, epfd: reactor.epfd, slotData: epollData)
            if s.accounted != 0 { _ = outputBudget.account(&s) }
            return outcome
        }
    }

    /// The reactor saw EPOLLOUT.
    func writable() -> FlushOutcome {
        shared.withLock { s in
            switch s.gate {
            case .open, .draining, .discarding: break
            case .closed: return .done
            }
            s.output.waitingWritable = false
            let outcome = Connection.write(&s, fd: fd, sink: sink, epfd: reactor.epfd, slotData: epollData)
            if s.accounted != 0 { _ = outputBudget.account(&s) }
            if !s.output.waitingWritable { s.output.updateInterest(fd: fd, epfd: reactor.epfd, data: epollData) }
            return outcome
        }
    }

    private static func write(_ s: inout Shared, fd: Int32, sink: EmbeddedSink?, epfd: Int32, slotData: UInt64) -> FlushOutcome {
        if let sink, s.pending > 0 {
            sink.write(s.output.bytes[s.output.start...])
            s.output.consumeAll()
        }
        switch s.output.write(fd: fd, epfd: epfd, data: slotData) {
        case .blocked: return .done
        case .failed: return .failed
        case .drained: break
        }
        switch s.gate {
        case .draining: return .closeNow
        case .open, .discarding, .closed: return .done
        }
    }

    /// The value registered with epoll: slot and generation.
    var epollData: UInt64 { UInt64(UInt32(truncatingIfNeeded: slot)) | UInt64(generation) << 32 }

    var generation: UInt32 { UInt32(truncatingIfNeeded: session.number) }
}
