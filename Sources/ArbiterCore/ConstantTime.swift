/// Comparisons whose running time does not depend on where the inputs differ.
public enum ConstantTime {
    /// Compares two byte strings in time that depends only on `presented.count`.
    ///
    /// A short-circuiting `==` would let an attacker on the LAN guess a key byte by
    /// byte from response times; here every byte is visited and the length mismatch
    /// is folded into the same accumulator.
    public static func equals(_ secret: [UInt8], _ presented: [UInt8]) -> Bool {
        var difference = UInt64(secret.count ^ presented.count)
        let count = presented.count
        let secretCount = secret.count
        var i = 0
        while i < count {
            let s = secretCount == 0 ? 0 : secret[i % secretCount]
            difference |= UInt64(s ^ presented[i])
            i += 1
        }
        return difference == 0 && secretCount > 0
    }
}
