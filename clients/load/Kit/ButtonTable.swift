/// The buttons of the panel under load, learnt from the first JOIN snapshot.
///
/// Immutable once built, so every generator thread reads it without a lock. Button ids
/// on the wire are looked up by an FNV hash of their bytes (checked against the stored
/// bytes), so reading a message never builds a String.
public final class ButtonTable: Sendable {
    public let panel: String
    public let ids: [String]
    public let kinds: [PanelButtonKind]
    /// Group index of every button.
    public let groups: [Int]
    public let groupNames: [String]
    /// Policy of every group, from the snapshot's `policy=` (absent: exclusive).
    public let policies: [LoadGroupPolicy]
    private let idBytes: [[UInt8]]
    private let groupBytes: [[UInt8]]
    private let lookup: [UInt64: Int32]

    public init(panel: String, buttons: [SnapshotButton]) {
        self.panel = panel
        ids = buttons.map(\.id)
        kinds = buttons.map(\.kind)
        var groupIndex: [String: Int] = [:]
        var names: [String] = []
        var groupOf: [Int] = []
        var policyOf: [LoadGroupPolicy] = []
        for b in buttons {
            let g = groupIndex[b.group] ?? names.count
            if g == names.count {
                groupIndex[b.group] = g
                names.append(b.group)
                policyOf.append(b.policy)
            }
            groupOf.append(g)
        }
        groups = groupOf
        groupNames = names
        policies = policyOf
        groupBytes = names.map { Array($0.utf8) }
        idBytes = buttons.map { Array($0.id.utf8) }
        var map: [UInt64: Int32] = [:]
        for (i, id) in ids.enumerated() where map[ByteText.fnv1a(id)] == nil {
            map[ByteText.fnv1a(id)] = Int32(i)
        }
        lookup = map
    }

    public var count: Int { ids.count }

    /// The index of the button named by `bytes[range]`, or -1.
    @inline(__always)
    public func index(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int32 {
        guard let i = lookup[ByteText.fnv1a(bytes, range)] else { return -1 }
        let stored = idBytes[Int(i)]
        guard stored.count == range.count else { return -1 }
        var k = 0
        for j in range {
            if bytes[j] != stored[k] { return -1 }
            k += 1
        }
        return i
    }

    /// The index of the group named by `bytes[range]`, or -1 (few groups: a scan).
    public func groupIndex(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int32 {
        for (g, name) in groupBytes.enumerated() where name.count == range.count {
            if name.withUnsafeBufferPointer({ $0.elementsEqual(UnsafeBufferPointer(rebasing: bytes[range])) }) { return Int32(g) }
        }
        return -1
    }

    public func index(of id: String) -> Int? {
        ids.firstIndex(of: id)
    }

    /// Indices of the buttons of one kind.
    public func buttons(ofKind kind: PanelButtonKind) -> [Int] {
        kinds.indices.filter { kinds[$0] == kind }
    }
}
