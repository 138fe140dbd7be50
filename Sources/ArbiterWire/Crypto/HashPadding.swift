/// The Merkle-Damgård finish that SHA-1 and SHA-256 share (FIPS 180-4 5.1.1): a 1 bit,
/// zeros up to 56 bytes into a block, the message length in bits as 8 big-endian bytes;
/// and the digest written as big-endian words.
enum HashPadding {
    /// What to feed after `messageBytes` bytes so the message ends on a 64-byte block.
    static func tail(afterMessageBytes messageBytes: UInt64) -> [UInt8] {
        let bitLength = messageBytes &* 8
        let used = Int(messageBytes % 64)
        let zeros = (used < 56 ? 55 : 119) - used
        var tail: [UInt8] = [0x80]
        tail.append(contentsOf: repeatElement(0, count: zeros))
        for shift in stride(from: 56, through: 0, by: -8) {
            tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }
        return tail
    }

    static func bigEndian(_ words: [UInt32]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(4 * words.count)
        for word in words {
            bytes.append(contentsOf: [
                UInt8(word >> 24), UInt8(truncatingIfNeeded: word >> 16),
                UInt8(truncatingIfNeeded: word >> 8), UInt8(truncatingIfNeeded: word),
            ])
        }
        return bytes
    }
}
