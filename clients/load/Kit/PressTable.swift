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

    /// The send time of the press that got `fence`, if known yet.
    @inline(__always)
    func sentAt(fence: Int64) -> UInt64? {
        let i = Int(truncatingIfNeeded: fence) & (PressTable.size - 1)
        guard cs_atomic_load_u64(fences + i) == UInt64(bitPattern: fence) else { return nil }
        return cs_atomic_load_u64(times + i)
    }
}
