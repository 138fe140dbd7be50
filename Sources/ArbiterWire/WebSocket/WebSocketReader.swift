/// The server's read side of one WebSocket connection: bytes in, messages out.
///
/// Combines ``WebSocketFrameDecoder`` and ``WebSocketMessageAssembler`` and adds what
/// neither can do alone: a text frame whose payload is still arriving is UTF-8 checked as
/// its bytes come in, so an invalid message fails even while its sender is stalled. After a
/// `.close` message nothing more is returned (RFC 6455 5.5.1: no data after close).
public struct WebSocketReader: Sendable {
    private var decoder: WebSocketFrameDecoder
    private var assembler: WebSocketMessageAssembler
    private var closed = false

    /// Creates a reader. `maxPayload` bounds one frame, `maxMessage` a whole message;
    /// both map to close code 1009 when exceeded.
    public init(maxPayload: Int, maxMessage: Int) {
        decoder = WebSocketFrameDecoder(maxPayload: maxPayload)
        assembler = WebSocketMessageAssembler(maxMessage: maxMessage)
    }

    /// Whether a close message was returned; later input is ignored.
    public var isClosed: Bool { closed }

    /// Adds received bytes.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        guard !closed else { return }
        decoder.append(bytes)
    }

    /// Returns the next complete message, or nil until more bytes are appended.
    ///
    /// Call it until it returns nil after every ``append(_:)``.
    /// - Throws: ``WebSocketError``: send a close frame with its `closeCode`, then close.
    public mutating func next() throws(WebSocketError) -> WebSocketMessage? {
        // Bounded: every iteration consumes one complete frame from the finite input.
        while !closed {
            guard let frame = try decoder.next() else {
                if let header = decoder.partialHeader {
                    try assembler.inspect(header, payload: decoder.partialPayload)
                }
                return nil
            }
            if let message = try assembler.push(frame) {
                if case .close = message {
                    closed = true
                    decoder = WebSocketFrameDecoder(maxPayload: decoder.maxPayload)
                }
                return message
            }
        }
        return nil
    }
}
