/// The frame opcodes of RFC 6455 section 5.2. The other values (3-7, 11-15) are reserved
/// and, with no extension negotiated, a protocol error.
public enum WebSocketOpcode: UInt8, Sendable, Equatable {
    case continuation = 0x0
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    /// Close, ping and pong: at most 125 payload bytes, never fragmented, and allowed
    /// between the fragments of a data message.
    public var isControl: Bool { rawValue & 0x8 != 0 }
}
