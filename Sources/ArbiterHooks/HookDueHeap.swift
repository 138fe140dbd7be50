/// Deliveries waiting for a retry, earliest due first: a binary min-heap, so a hook with
/// thousands waiting finds the next one without a scan.
struct HookDueHeap: Sendable {
    private var items: [(due: Int64, serial: UInt64)] = []

    var isEmpty: Bool { items.isEmpty }
    var count: Int { items.count }
    var first: (due: Int64, serial: UInt64)? { items.first }

    mutating func insert(due: Int64, serial: UInt64) {
        items.append((due, serial))
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard less(i, parent) else { break }
            items.swapAt(i, parent)
            i = parent
        }
    }

    mutating func popFirst() -> (due: Int64, serial: UInt64)? {
        guard !items.isEmpty else { return nil }
        items.swapAt(0, items.count - 1)
        let top = items.removeLast()
        var i = 0
        while true {
            let l = 2 * i + 1
            let r = l + 1
            var smallest = i
            if l < items.count, less(l, smallest) { smallest = l }
            if r < items.count, less(r, smallest) { smallest = r }
            guard smallest != i else { break }
            items.swapAt(i, smallest)
            i = smallest
        }
        return top
    }

    private func less(_ a: Int, _ b: Int) -> Bool {
        items[a].due != items[b].due ? items[a].due < items[b].due : items[a].serial < items[b].serial
    }
}
