/// Encodes WebSocket frames (RFC 6455 5.2). Server frames are never masked; the masked
/// variant exists for clients (load generator, tests).
public enum WebSocketFrameEncoder {
    /// The largest payload of a control frame (close, ping, pong).
    public static let maxControlPayload = 125

    /// Appends one unmasked frame to `buffer`, using the 7-, 16- or 64-bit length form
    /// that fits. Control frames must have `fin` and at most 125 payload bytes (a
    /// programmer error otherwise; the helpers below truncate instead).
    public static func encode(
        opcode: WebSocketOpcode,
        payload: some Collection<UInt8>,
        fin: Bool = true,
        into buffer: inout [UInt8]
    ) {
        appendHeader(opcode: opcode, length: payload.count, fin: fin, maskingKey: nil, into: &buffer)
        buffer.append(contentsOf: payload)
    }

    /// Appends one frame masked with `maskingKey` (its four bytes big-endian), as a client
    /// must send it.
    public static func encode(
        opcode: WebSocketOpcode,
        payload: some Collection<UInt8>,
        fin: Bool = true,
        maskingKey: UInt32,
        into buffer: inout [UInt8]
    ) {
        appendHeader(opcode: opcode, length: payload.count, fin: fin, maskingKey: maskingKey, into: &buffer)
        let start = buffer.count
        buffer.append(contentsOf: payload)
        WebSocketMasking.apply(key: maskingKey, phase: 0, to: &buffer, range: start..<buffer.count)
    }

    /// A single-frame text message; `utf8` must already be valid UTF-8.
    public static func textFrame(_ utf8: [UInt8]) -> [UInt8] {
        frame(.text, utf8)
    }

    /// A single-frame binary message.
    public static func binaryFrame(_ bytes: [UInt8]) -> [UInt8] {
        frame(.binary, bytes)
    }

    /// A ping; a payload over 125 bytes is truncated.
    public static func pingFrame(_ payload: [UInt8] = []) -> [UInt8] {
        frame(.ping, payload.prefix(maxControlPayload))
    }

    /// A pong, normally echoing a ping's payload; over 125 bytes is truncated.
    public static func pongFrame(_ payload: [UInt8]) -> [UInt8] {
        frame(.pong, payload.prefix(maxControlPayload))
    }

    /// A close frame. With `code` nil the payload is empty (and `reason` is ignored);
    /// otherwise the reason is cut to fit 125 bytes without splitting a code point.
    public static func closeFrame(code: UInt16?, reason: String = "") -> [UInt8] {
        guard let code else { return frame(.close, []) }
        var payload: [UInt8] = [UInt8(code >> 8), UInt8(truncatingIfNeeded: code)]
        var reasonBytes = Array(reason.utf8)
        if reasonBytes.count > maxControlPayload - 2 {
            var cut = maxControlPayload - 2
            // Back up over continuation bytes (10xxxxxx) so the reason stays valid UTF-8.
            while cut > 0 && reasonBytes[cut] & 0xC0 == 0x80 { cut -= 1 }
            reasonBytes = Array(reasonBytes[..<cut])
        }
        payload.append(contentsOf: reasonBytes)
        return frame(.close, payload)
    }

    private static func frame(_ opcode: WebSocketOpcode, _ payload: some Collection<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(payload.count + 10)
        encode(opcode: opcode, payload: payload, into: &out)
        return out
    }

    private static func appendHeader(
        opcode: WebSocketOpcode,
        length: Int,
        fin: Bool,
        maskingKey: UInt32?,
        into buffer: inout [UInt8]
    ) {
        precondition(
            !opcode.isControl || (fin && length <= maxControlPayload),
            "control frames must be final and carry at most 125 bytes")
        buffer.append((fin ? 0x80 : 0x00) | opcode.rawValue)
        let maskBit: UInt8 = maskingKey == nil ? 0x00 : 0x80
        if length <= 125 {
            buffer.append(maskBit | UInt8(length))
        } else if length <= 0xFFFF {
            buffer.append(maskBit | 126)
            buffer.append(UInt8(length >> 8))
            buffer.append(UInt8(truncatingIfNeeded: length))
        } else {
            buffer.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) {
                buffer.append(UInt8(truncatingIfNeeded: UInt64(length) >> UInt64(shift)))
            }
        }
        if let key = maskingKey {
            buffer.append(contentsOf: [
                UInt8(key >> 24), UInt8(truncatingIfNeeded: key >> 16),
                UInt8(truncatingIfNeeded: key >> 8), UInt8(truncatingIfNeeded: key),
            ])
        }
    }
}
