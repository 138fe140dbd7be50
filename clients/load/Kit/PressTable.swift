import CSystem

/// When each press was sent, by fence, shared by all generator threads: a member that
/// reads PRESSED fence=f looks up the time its presser sent the DOWN that got f.
///
/// A ring of 64 Ki slots of plain words written with release/acquire atomics: the time
/// is stored before the fence, so whoever sees the fence sees its time. A slot is reused
/// only 65,536 grants later, far beyond any member's lag.
final class PressTable: @unchecked Sendable {
    private static let size = 1 << 16
    private let fences: UnsafeMutablePointer<UInt64>
    private let times: UnsafeMutablePointer<UInt64>

    init() {
        fences = .allocate(capacity: PressTable.size)
        fences.initialize(repeating: .max, count: PressTable.size)
        times = .allocate(capacity: PressTable.size)
        times.initialize(repeating: 0, count: PressTable.size)
    }

    deinit {
        fences.deallocate()
        times.deallocate()
    }

    @inline(__always)
    func store(fence: Int64, sentAt: UInt64) {
        let i = Int(truncatingIfNeeded: fence) & (PressTable.size - 1)
        cs_atomic_store_u64(times + i, sentAt)
        cs_atomic_store_u64(fences + i, UInt64(bitPattern: fence))
    }

    /// buzz: a player's press in the round whose ARMED had seq `round`. BUZZED carries
    /// no fence, and a session presses once per round, so the pair names the press. The
    /// multiplier is odd: within one round, sessions that differ in their low 16 bits
    /// take different slots.
    @inline(__always)
    func store(session: Int64, round: Int64, sentAt: UInt64) {
        store(fence: PressTable.key(session: session, round: round), sentAt: sentAt)
    }

    @inline(__always)
    func sentAt(session: Int64, round: Int64) -> UInt64? {
        sentAt(fence: PressTable.key(session: session, round: round))
    }

    @inline(__always)
    private static func key(session: Int64, round: Int64) -> Int64 {
        Int64(bitPattern: (UInt64(bitPattern: session) &* 0x9E37_79B9_7F4A_7C15) ^ UInt64(bitPattern: round))
    }

    /// The send time of the press that got `fence`, if known yet.
    @inline(__always)
    func sentAt(fence: Int64) -> UInt64? {
        let i = Int(truncatingIfNeeded: fence) & (PressTable.size - 1)
        guard cs_atomic_load_u64(fences + i) == UInt64(bitPattern: fence) else { return nil }
        return cs_atomic_load_u64(times + i)
    }
}
