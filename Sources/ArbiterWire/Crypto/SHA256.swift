/// SHA-256 (FIPS 180-4), for the cluster's relay handshake (HMAC-SHA256) and the config
/// digest. Hand-written because the project takes no packages and Foundation on Linux has
/// no CryptoKit; checked against FIPS 180-4's and RFC 4231's vectors.
public struct SHA256: Sendable {
    public static let digestBytes = 32
    public static let blockBytes = 64

    private var h: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) =
        (0x6A09_E667, 0xBB67_AE85, 0x3C6E_F372, 0xA54F_F53A, 0x510E_527F, 0x9B05_688C, 0x1F83_D9AB, 0x5BE0_CD19)
    /// Bytes of an incomplete 64-byte block; empty between blocks.
    private var pending: [UInt8] = []
    private var totalBytes: UInt64 = 0

    public init() {
        pending.reserveCapacity(SHA256.blockBytes)
    }

    /// Returns the 32-byte digest of `bytes`.
    public static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        var sha = SHA256()
        sha.update(bytes)
        return sha.finalize()
    }

    /// Adds message bytes; may be called any number of times.
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        for byte in bytes {
            pending.append(byte)
            if pending.count == SHA256.blockBytes { processPendingBlock() }
        }
    }

    /// Pads the message and returns the 32-byte digest. The value is spent afterwards.
    public consuming func finalize() -> [UInt8] {
        update(HashPadding.tail(afterMessageBytes: totalBytes + UInt64(pending.count)))
        return HashPadding.bigEndian([h.0, h.1, h.2, h.3, h.4, h.5, h.6, h.7])
    }

    private static let k: [UInt32] = [
        0x428A_2F98, 0x7137_4491, 0xB5C0_FBCF, 0xE9B5_DBA5, 0x3956_C25B, 0x59F1_11F1, 0x923F_82A4, 0xAB1C_5ED5,
        0xD807_AA98, 0x1283_5B01, 0x2431_85BE, 0x550C_7DC3, 0x72BE_5D74, 0x80DE_B1FE, 0x9BDC_06A7, 0xC19B_F174,
        0xE49B_69C1, 0xEFBE_4786, 0x0FC1_9DC6, 0x240C_A1CC, 0x2DE9_2C6F, 0x4A74_84AA, 0x5CB0_A9DC, 0x76F9_88DA,
        0x983E_5152, 0xA831_C66D, 0xB003_27C8, 0xBF59_7FC7, 0xC6E0_0BF3, 0xD5A7_9147, 0x06CA_6351, 0x1429_2967,
        0x27B7_0A85, 0x2E1B_2138, 0x4D2C_6DFC, 0x5338_0D13, 0x650A_7354, 0x766A_0ABB, 0x81C2_C92E, 0x9272_2C85,
        0xA2BF_E8A1, 0xA81A_664B, 0xC24B_8B70, 0xC76C_51A3, 0xD192_E819, 0xD699_0624, 0xF40E_3585, 0x106A_A070,
        0x19A4_C116, 0x1E37_6C08, 0x2748_774C, 0x34B0_BCB5, 0x391C_0CB3, 0x4ED8_AA4A, 0x5B9C_CA4F, 0x682E_6FF3,
        0x748F_82EE, 0x78A5_636F, 0x84C8_7814, 0x8CC7_0208, 0x90BE_FFFA, 0xA450_6CEB, 0xBEF9_A3F7, 0xC671_78F2,
    ]

    private mutating func processPendingBlock() {
        // A stack buffer for the message schedule: a heap array per block would dominate.
        let (a, b, c, d, e, f, g, hh) = withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            for t in 0..<16 {
                w[t] =
                    UInt32(pending[4 * t]) << 24 | UInt32(pending[4 * t + 1]) << 16
                    | UInt32(pending[4 * t + 2]) << 8 | UInt32(pending[4 * t + 3])
            }
            for t in 16..<64 {
                let s0 = w[t - 15].rotatedRight(7) ^ w[t - 15].rotatedRight(18) ^ (w[t - 15] >> 3)
                let s1 = w[t - 2].rotatedRight(17) ^ w[t - 2].rotatedRight(19) ^ (w[t - 2] >> 10)
                w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
            }
            var (a, b, c, d, e, f, g, hh) = h
            for t in 0..<64 {
                let s1 = e.rotatedRight(6) ^ e.rotatedRight(11) ^ e.rotatedRight(25)
                let ch = (e & f) ^ (~e & g)
                let temp1 = hh &+ s1 &+ ch &+ SHA256.k[t] &+ w[t]
                let s0 = a.rotatedRight(2) ^ a.rotatedRight(13) ^ a.rotatedRight(22)
                let maj = (a & b) ^ (a & c) ^ (b & c)
                let temp2 = s0 &+ maj
                (hh, g, f, e, d, c, b, a) = (g, f, e, d &+ temp1, c, b, a, temp1 &+ temp2)
            }
            return (a, b, c, d, e, f, g, hh)
        }
        h = (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e, h.5 &+ f, h.6 &+ g, h.7 &+ hh)
        totalBytes &+= 64
        pending.removeAll(keepingCapacity: true)
    }
}

extension UInt32 {
    fileprivate func rotatedRight(_ count: UInt32) -> UInt32 {
        (self >> count) | (self << (32 - count))
    }
}
