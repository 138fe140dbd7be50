import ArbiterCore

/// Writes replies, events and server messages in either form into a byte buffer.
public enum MessageEncoder {
    public static func encode(_ reply: PanelReply, panel: PanelConfig, format: WireFormat, id: CommandID?, into out: inout [UInt8]) {
        switch format {
        case .text: with(TextSink.self, &out) { describe(reply, panel: panel, id: id, into: &$0) }
        case .json: with(JSONSink.self, &out) { describe(reply, panel: panel, id: id, into: &$0) }
        }
    }

    public static func encode(_ event: PanelEvent, panel: PanelConfig, format: WireFormat, into out: inout [UInt8]) {
        switch format {
        case .text: with(TextSink.self, &out) { describe(event, panel: panel, into: &$0, fieldsOnly: false) }
        case .json: with(JSONSink.self, &out) { describe(event, panel: panel, into: &$0, fieldsOnly: false) }
        }
    }

    public static func encode(_ message: ServerMessage, format: WireFormat, id: CommandID? = nil, into out: inout [UInt8]) {
        switch format {
        case .text: with(TextSink.self, &out) { describe(message, id: id, into: &$0) }
        case .json: with(JSONSink.self, &out) { describe(message, id: id, into: &$0) }
        }
    }

    /// Convenience for tests and tools: one message as a string.
    public static func text(_ message: ServerMessage, format: WireFormat = .text, id: CommandID? = nil) -> String {
        var out: [UInt8] = []
        encode(message, format: format, id: id, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Moves `out` into a sink and back, so appending never copies the buffer.
    @inline(__always)
    static func with<S: MessageSink>(_: S.Type, _ out: inout [UInt8], _ body: (inout S) -> Void) {
        var sink = S()
        swap(&sink.out, &out)
        body(&sink)
        swap(&sink.out, &out)
    }
}
