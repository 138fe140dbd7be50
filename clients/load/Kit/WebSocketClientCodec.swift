import ArbiterWire

/// The framing of a WebSocket client: every frame it sends is masked with a fresh key
/// (RFC 6455 5.3), and the server's unmasked frames are decoded into whole messages.
public struct WebSocketClientCodec {
    public enum Incoming: Equatable {
        case text([UInt8])
        case binary([UInt8])
        case ping([UInt8])
        case pong([UInt8])
        case close
    }

    private var decoder = WebSocketFrameDecoder(maxPayload: 1 << 22, requiresMasking: false)
    private var random: SplitMix64
    /// Fragments of the data message in progress.
    private var fragments: [UInt8] = []
    private var fragmentedText = false
    private var inMessage = false

    public init(seed: UInt64) {
        random = SplitMix64(seed: seed)
    }

    /// Appends one masked text frame carrying `payload`.
    public mutating func appendText(_ payload: [UInt8], to out: inout [UInt8]) {
        let key = UInt32(truncatingIfNeeded: random.next())
        WebSocketFrameEncoder.encode(opcode: .text, payload: payload, maskingKey: key, into: &out)
    }

    /// Appends a masked pong answering a ping.
    public mutating func appendPong(_ payload: [UInt8], to out: inout [UInt8]) {
        let key = UInt32(truncatingIfNeeded: random.next())
        WebSocketFrameEncoder.encode(opcode: .pong, payload: payload.prefix(125), maskingKey: key, into: &out)
    }

    public mutating func append(_ bytes: some Collection<UInt8>) {
        decoder.append(bytes)
    }

    /// The next complete message, or nil until more bytes arrive.
    public mutating func next() throws(WebSocketError) -> Incoming? {
        // Bounded: each turn consumes one complete frame of the finite input.
        while let frame = try decoder.next() {
            switch frame.opcode {
            case .ping: return .ping(frame.payload)
            case .pong: return .pong(frame.payload)
            case .close: return .close
            case .text, .binary:
                guard !inMessage else { throw .protocolError("new data frame inside a fragmented message") }
                if frame.fin { return frame.opcode == .text ? .text(frame.payload) : .binary(frame.payload) }
                inMessage = true
                fragmentedText = frame.opcode == .text
                fragments = frame.payload
            case .continuation:
                guard inMessage else { throw .protocolError("continuation without a message") }
                fragments.append(contentsOf: frame.payload)
                if frame.fin {
                    inMessage = false
                    let whole = fragments
                    fragments = []
                    return fragmentedText ? .text(whole) : .binary(whole)
                }
            }
        }
        return nil
    }
}
