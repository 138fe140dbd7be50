/// The first report of each recent `seq` of the panel, so that every other member's
/// event at that seq can be compared with it, and the panel model can apply events in
/// seq order whichever member reported them first.
///
/// A ring indexed by seq: memory stays bounded by how far the slowest member lags (the
/// server cuts a member off past 1 MiB of unsent output, a few ten thousand events), not
/// by the length of the run. The ring doubles when a slot is still needed.
struct SeqWindow {
    struct Entry {
        var seq: Int64
        var message: WireMessage
        var stream: Int32
    }

    private var slots: [Entry?]
    private var mask: Int

    init(capacity: Int = 4096) {
        var size = 1
        while size < capacity { size <<= 1 }
        slots = Array(repeating: nil, count: size)
        mask = size - 1
    }

    var capacity: Int { slots.count }

    func entry(_ seq: Int64) -> Entry? {
        guard let e = slots[Int(truncatingIfNeeded: seq) & mask], e.seq == seq else { return nil }
        return e
    }

    /// Stores the first report of `entry.seq`. `oldestNeeded` is the lowest seq anyone
    /// may still look up; a slot holding a needed seq makes the ring grow.
    mutating func insert(_ entry: Entry, oldestNeeded: () -> Int64) {
        let i = Int(truncatingIfNeeded: entry.seq) & mask
        if let old = slots[i], old.seq != entry.seq, old.seq >= oldestNeeded() {
            grow()
            return insert(entry, oldestNeeded: oldestNeeded)
        }
        slots[i] = entry
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: nil, count: old.count * 2)
        mask = slots.count - 1
        for case let e? in old {
            let i = Int(truncatingIfNeeded: e.seq) & mask
            if let present = slots[i], present.seq > e.seq { continue }
            slots[i] = e
        }
    }
}
