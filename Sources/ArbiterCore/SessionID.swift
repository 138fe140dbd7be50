/// A connection's session number, shown as `s<n>`.
public struct SessionID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var number: Int

    public init(_ number: Int) { self.number = number }

    public static func < (lhs: SessionID, rhs: SessionID) -> Bool { lhs.number < rhs.number }

    public var description: String { "s\(number)" }

    /// Hashed as its number is, in one step: the synthesized hashing feeds a `Hasher` and
    /// finalizes it, about twice the instructions, and a relayed press looks sessions up
    /// in several tables (callgrind). Equal numbers, equal hashes, as before.
    @inlinable public func hash(into hasher: inout Hasher) { hasher.combine(number) }
    @inlinable public func _rawHashValue(seed: Int) -> Int { number._rawHashValue(seed: seed) }

    /// Parses `s<n>`; nil for anything else.
    public init?(parsing text: some StringProtocol) {
        guard text.first == "s", let n = Int(text.dropFirst()), n > 0, String(n) == text.dropFirst() else { return nil }
        self.number = n
    }
}
