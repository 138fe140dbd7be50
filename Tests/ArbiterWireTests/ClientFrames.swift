@testable import ArbiterWire

/// Builds client-to-server frames the way a browser does: masked, with a key that varies
/// per frame so that masking bugs cannot cancel out.
enum ClientFrames {
    static func frame(
        _ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true,
        key: UInt32 = 0x37FA_213D
    ) -> [UInt8] {
        var out: [UInt8] = []
        WebSocketFrameEncoder.encode(opcode: opcode, payload: payload, fin: fin, maskingKey: key, into: &out)
        return out
    }

    static func text(_ string: String, fin: Bool = true, key: UInt32 = 0x1234_5678) -> [UInt8] {
        frame(.text, Array(string.utf8), fin: fin, key: key)
    }

    /// A raw frame with arbitrary first byte and payload, for malformed cases.
    static func raw(firstByte: UInt8, payload: [UInt8], key: UInt32 = 0xA1B2_C3D4) -> [UInt8] {
        var out = frame(.binary, payload, key: key)
        out[0] = firstByte
        return out
    }
}
