import ArbiterCluster

/// Nonces for the relay handshake, from the system's random source
/// (`SystemRandomNumberGenerator`: getrandom(2) on Linux, which the standard library
/// documents as cryptographically secure). Kept out of the pure codec so its tests can
/// hand in fixed nonces.
public enum RelayNonce {
    public static func draw() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(RelayProof.nonceBytes)
        while bytes.count < RelayProof.nonceBytes {
            let word = generator.next()
            for shift in stride(from: 0, to: 64, by: 8) where bytes.count < RelayProof.nonceBytes {
                bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift)))
            }
        }
        return bytes
    }
}
