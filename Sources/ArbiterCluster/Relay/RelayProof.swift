import ArbiterWire

/// The handshake's arithmetic. Each side proves it knows the cluster key by
///
///     HMAC-SHA256(key, "arbiter-relay 1" 0 role 0 dialerNonce acceptorNonce dialerNode 0 acceptorNode)
///
/// with role `dialer` or `acceptor`. Both nonces are in every MAC, so a recorded handshake
/// is worthless against a fresh nonce; the role is in it, so a MAC cannot be reflected
/// back to the side that computed it; the node names are in it, so neither can be swapped.
public enum RelayProof {
    public static let nonceBytes = 32
    public static let version = "1"

    public static func mac(key: [UInt8], role: String, dialerNonce: [UInt8], acceptorNonce: [UInt8], dialer: String, acceptor: String) -> [UInt8] {
        var message = Array("arbiter-relay \(version)\0\(role)\0".utf8)
        message += dialerNonce
        message += acceptorNonce
        message += Array("\(dialer)\0\(acceptor)".utf8)
        return HMACSHA256.mac(key: key, message: message)
    }

    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] })
    }

    static func bytes(hex: Substring) -> [UInt8]? {
        let chars = Array(hex.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 2)
        var i = 0
        while i < chars.count {
            guard let high = nibble(chars[i]), let low = nibble(chars[i + 1]) else { return nil }
            out.append(high << 4 | low)
            i += 2
        }
        return out
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    /// Node names on the link: what `--node` accepts.
    static func isNodeName(_ s: Substring) -> Bool {
        !s.isEmpty && s.utf8.count <= 64
            && s.utf8.allSatisfy { c in
                (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2D || c == 0x2E || c == 0x5F
            }
    }
}
