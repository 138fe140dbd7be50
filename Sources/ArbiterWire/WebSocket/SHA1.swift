/// SHA-1 (RFC 3174), needed only for the WebSocket handshake's `Sec-WebSocket-Accept`.
///
/// SHA-1 is broken for collision resistance; RFC 6455 uses it as a fixed transform, not for
/// security, which is why a small hand-written implementation is acceptable here. Do not
/// use it to protect anything.
public struct SHA1: Sendable {
    private var h0: UInt32 = 0x6745_2301
    private var h1: UInt32 = 0xEFCD_AB89
    private var h2: UInt32 = 0x98BA_DCFE
    private var h3: UInt32 = 0x1032_5476
    private var h4: UInt32 = 0xC3D2_E1F0
    /// Bytes of an incomplete 64-byte block; empty between blocks.
    private var pending: [UInt8] = []
    private var totalBytes: UInt64 = 0

    /// Starts a new digest.
    public init() {}

    /// Returns the 20-byte digest of `bytes`.
    public static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        var sha = SHA1()
        sha.update(bytes)
        return sha.finalize()
    }

    /// Adds message bytes; may be called any number of times.
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        for byte in bytes {
            pending.append(byte)
            if pending.count == 64 {
                processPendingBlock()
            }
        }
    }

    /// Pads the message and returns the 20-byte digest. The value is spent afterwards.
    public consuming func finalize() -> [UInt8] {
        update(HashPadding.tail(afterMessageBytes: totalBytes + UInt64(pending.count)))
        return HashPadding.bigEndian([h0, h1, h2, h3, h4])
    }

    private mutating func processPendingBlock() {
        // A stack buffer for the message schedule: a heap array per block would dominate.
        let (a, b, c, d, e) = withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 80) { w in
            for t in 0..<16 {
                w[t] =
                    UInt32(pending[4 * t]) << 24 | UInt32(pending[4 * t + 1]) << 16
                    | UInt32(pending[4 * t + 2]) << 8 | UInt32(pending[4 * t + 3])
            }
            for t in 16..<80 {
                w[t] = (w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16]).rotatedLeft(by: 1)
            }
            var (a, b, c, d, e) = (h0, h1, h2, h3, h4)
            for t in 0..<80 {
                let f: UInt32
                let k: UInt32
                switch t {
                case 0..<20: f = (b & c) | (~b & d); k = 0x5A82_7999
                case 20..<40: f = b ^ c ^ d; k = 0x6ED9_EBA1
                case 40..<60: f = (b & c) | (b & d) | (c & d); k = 0x8F1B_BCDC
                default: f = b ^ c ^ d; k = 0xCA62_C1D6
                }
                let temp = a.rotatedLeft(by: 5) &+ f &+ e &+ w[t] &+ k
                (e, d, c, b, a) = (d, c, b.rotatedLeft(by: 30), a, temp)
            }
            return (a, b, c, d, e)
        }
        h0 &+= a
        h1 &+= b
        h2 &+= c
        h3 &+= d
        h4 &+= e
        totalBytes &+= 64
        pending.removeAll(keepingCapacity: true)
    }
}

extension UInt32 {
    fileprivate func rotatedLeft(by count: UInt32) -> UInt32 {
        (self << count) | (self >> (32 - count))
    }
}
