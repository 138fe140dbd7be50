/// The RFC 6455 5.3 masking transform (XOR with a repeating 4-byte key); applying it
/// twice restores the input, so it both masks and unmasks.
enum WebSocketMasking {
    /// XORs `buffer` in place with `key` (the four key bytes as they appear on the wire,
    /// big-endian), starting at key byte `phase` (0...3) so that a payload unmasked in
    /// pieces as it arrives gives the same result as one pass.
    static func apply(key: UInt32, phase: Int, to buffer: UnsafeMutableRawBufferPointer) {
        let keyBytes: [UInt8] = [
            UInt8(key >> 24), UInt8(truncatingIfNeeded: key >> 16),
            UInt8(truncatingIfNeeded: key >> 8), UInt8(truncatingIfNeeded: key),
        ]
        var pattern: UInt64 = 0
        // Built in memory order, so the same XOR works on little- and big-endian hosts.
        withUnsafeMutableBytes(of: &pattern) { raw in
            for index in 0..<8 { raw[index] = keyBytes[(phase + index) & 3] }
        }
        let count = buffer.count
        var offset = 0
        // Eight bytes per step: the pattern repeats every 4, so it stays aligned.
        while offset + 8 <= count {
            let word = buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            buffer.storeBytes(of: word ^ pattern, toByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        while offset < count {
            buffer[offset] ^= keyBytes[(phase + offset) & 3]
            offset += 1
        }
    }

    /// Masks or unmasks `bytes[range]` in place, starting at key byte `phase`.
    static func apply(key: UInt32, phase: Int, to bytes: inout [UInt8], range: Range<Int>) {
        guard !range.isEmpty else { return }
        bytes.withUnsafeMutableBytes { raw in
            apply(key: key, phase: phase, to: UnsafeMutableRawBufferPointer(rebasing: raw[range]))
        }
    }
}
