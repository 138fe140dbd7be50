import ArbiterIO

/// This node's questions to other nodes waiting for their answer, by id: a panel's state
/// asked of its leader (`RelayMessage.stateQuery`, for `LeaderStateGather`), a `KICK` asked
/// of the node a session is on (`RelayMessage.kick`). Each is settled once: by its
/// answer, or forgotten at its asker's deadline (a later answer then finds nobody and is
/// dropped). Any thread.
final class RelayQueries<Answer: Sendable>: Sendable {
    typealias Done = @Sendable (Answer) -> Void

    private struct Pending {
        let node: String
        let subject: String
        let done: Done
    }

    private let pending = Locked<(next: UInt64, byID: [UInt64: Pending])>((1, [:]))

    /// A new id for a question about `subject` (a panel, a session) to `node`; `done` gets
    /// the answer.
    func open(_ subject: String, node: String, done: @escaping Done) -> UInt64 {
        pending.withLock { table in
            let id = table.next
            table.next += 1
            table.byID[id] = Pending(node: node, subject: subject, done: done)
            return id
        }
    }

    /// The answer to `id` from `node` about `subject`: its waiter, taken out, if it is the
    /// one asked. An answer from another node, or about another subject, settles nothing.
    func settle(_ id: UInt64, _ subject: String, from node: String) -> Done? {
        pending.withLock { table in
            guard let entry = table.byID[id], entry.node == node, entry.subject == subject else { return nil }
            table.byID[id] = nil
            return entry.done
        }
    }

    func forget(_ id: UInt64) {
        pending.withLock { _ = $0.byID.removeValue(forKey: id) }
    }

    var count: Int { pending.withLock { $0.byID.count } }
}
