import Synchronization

/// Counts changes to what a decision depends on (the lease, the decision table). Bumped
/// by the writer while it still holds its lock, after the change; read first by whoever
/// computes a `DecisionWindow`, so that a window is never newer than the state it saw.
final class ChangeCounter: Sendable {
    private let value = Atomic<UInt64>(0)

    var current: UInt64 { value.load(ordering: .acquiring) }

    func bump() { value.add(1, ordering: .releasing) }
}
