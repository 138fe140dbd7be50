/// A follower's `stateQuery` frames waiting for their leader's answer, by id. Each is
/// asked for by one `PanelsAnswer` and settled once: by its answer, or forgotten at that
/// answer's deadline (a later answer then finds nobody and is dropped). Any thread.
final class StateQueries: Sendable {
    typealias Done = @Sendable ([UInt8]) -> Void

    private struct Pending {
        let node: String
        let panel: String
        let done: Done
    }

    private let pending = Locked<(next: UInt64, byID: [UInt64: Pending])>((1, [:]))

    /// A new id for a query of `panel` to `node`; `done` gets the answer.
    func open(panel: String, node: String, done: @escaping Done) -> UInt64 {
        pending.withLock { table in
            let id = table.next
            table.next += 1
            table.byID[id] = Pending(node: node, panel: panel, done: done)
            return id
        }
    }

    /// The answer to `id` from `node` about `panel`: its waiter, taken out, if it is the
    /// one asked. An answer from another node, or about another panel, settles nothing.
    func settle(_ id: UInt64, panel: String, from node: String) -> Done? {
        pending.withLock { table in
            guard let entry = table.byID[id], entry.node == node, entry.panel == panel else { return nil }
            table.byID[id] = nil
            return entry.done
        }
    }

    func forget(_ id: UInt64) {
        pending.withLock { _ = $0.byID.removeValue(forKey: id) }
    }

    var count: Int { pending.withLock { $0.byID.count } }
}
