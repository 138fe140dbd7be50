import ArbiterCore
import ArbiterWire

/// The last journaled events of a panel, for HISTORY. Events are kept compact and
/// turned into records only when someone asks, so the press path pays almost nothing.
package struct HistoryRing {
    package enum Entry {
        /// An event of this run and its wall time (Unix milliseconds).
        case live(PanelEvent, at: Int64)
        /// A record read back from the journal at start.
        case loaded(HistoryRecord)
    }

    private var entries: [Entry] = []
    private var head = 0
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
    }

    mutating func append(_ entry: Entry) {
        if entries.count < capacity {
            entries.append(entry)
        } else {
            entries[head] = entry
            head = (head + 1) % capacity
        }
    }

    /// The last `n`, oldest first.
    package func last(_ n: Int) -> [Entry] {
        let count = min(n, entries.count)
        var result: [Entry] = []
        result.reserveCapacity(count)
        let start = entries.count - count
        for i in start..<entries.count {
            result.append(entries[(head + i) % entries.count])
        }
        return result
    }
}
