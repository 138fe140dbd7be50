/// One decoded WebSocket frame with its payload already unmasked.
public struct WebSocketFrame: Sendable, Equatable {
    /// Whether this is the final fragment of its message.
    public var fin: Bool
    /// The frame's opcode.
    public var opcode: WebSocketOpcode
    /// The application payload, unmasked.
    public var payload: [UInt8]

    /// Creates a frame.
    public init(fin: Bool = true, opcode: WebSocketOpcode, payload: [UInt8] = []) {
        self.fin = fin
        self.opcode = opcode
        self.payload = payload
    }
}
