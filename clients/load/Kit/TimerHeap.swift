/// A binary min-heap of wake-ups: (deadline, peer slot, generation). A stale entry (its
/// peer's generation moved on) is skipped when it comes due, so cancelling is O(1).
struct TimerHeap {
    struct Entry {
        var deadline: UInt64
        var slot: Int32
        var generation: UInt32
    }

    private var items: [Entry] = []

    var isEmpty: Bool { items.isEmpty }
    var count: Int { items.count }
    var nextDeadline: UInt64? { items.first?.deadline }

    mutating func push(_ e: Entry) {
        items.append(e)
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard items[parent].deadline > items[i].deadline else { break }
            items.swapAt(parent, i)
            i = parent
        }
    }

    /// Removes and returns the earliest entry if it is due at `now`.
    mutating func popDue(_ now: UInt64) -> Entry? {
        guard let first = items.first, first.deadline <= now else { return nil }
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            var i = 0
            while true {
                let l = 2 * i + 1
                let r = l + 1
                var smallest = i
                if l < items.count, items[l].deadline < items[smallest].deadline { smallest = l }
                if r < items.count, items[r].deadline < items[smallest].deadline { smallest = r }
                if smallest == i { break }
                items.swapAt(i, smallest)
                i = smallest
            }
        }
        return first
    }

    mutating func removeAll() {
        items.removeAll()
    }
}
