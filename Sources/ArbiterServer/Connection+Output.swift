import ArbiterIO
import ArbiterWire

extension Connection {
    /// Appends output built by `body` while holding the lock, enforcing the bound.
    /// `body` writes message lines in the connection's event form; on a WebSocket each
    /// becomes a text frame, unless `raw` (control frames, HTTP bytes).
    func append(raw: Bool = false, _ body: (inout [UInt8], WireFormat) -> Void) -> AppendOutcome {
        withLock {
            guard acceptsAppend else { return .dropped }
            add(raw: raw, body)
            return appended()
        }
    }

    /// Appends the connection's last output and, in the same step under the lock, stops
    /// accepting more and marks it to close once written. The reactor calls it right
    /// after its state machine moved to `closing`: no flush on another thread can write
    /// the last words and miss that it must close.
    func appendLast(raw: Bool = false, _ body: (inout [UInt8], WireFormat) -> Void) -> AppendOutcome {
        withLock {
            guard acceptsOutput else { return .dropped }
            guard acceptsAppend else { return sealed(after: .dropped) }
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
