import ArbiterCore

/// The panels a node's server was told to decide, each with its fence block and the lease
/// it was won under. A decision needs that very lease to be held and safe at the instant
/// of asking, so neither a passed deadline nor a lease lost and granted again (between two
/// checks of whoever drives this) can let an old term's panel be decided.
public struct DecisionTable: Equatable, Sendable {
    public struct Entry: Equatable, Sendable {
        public var block: FenceBlock
        public var lease: Int64
    }

    public private(set) var entries: [String: Entry] = [:]

    public init() {}

    public var isEmpty: Bool { entries.isEmpty }

    public mutating func start(_ panel: String, block: FenceBlock, lease: Int64) {
        entries[panel] = Entry(block: block, lease: lease)
    }

    /// More fences in the same term; false if the panel is not decided in that term.
    public mutating func extend(_ panel: String, block: FenceBlock) -> Bool {
        guard let entry = entries[panel], entry.block.term == block.term else { return false }
        entries[panel] = Entry(block: block, lease: entry.lease)
        return true
    }

    /// Stops `panel` if it is decided in `term`; false if it was not (already stopped).
    public mutating func stop(_ panel: String, term: Int64) -> Bool {
        guard entries[panel]?.block.term == term else { return false }
        entries[panel] = nil
        return true
    }

    public func canDecide(_ panel: String, lease: NodeLeaseStateMachine, now: Instant) -> FenceBlock? {
        guard lease.isSafe(at: now), let entry = entries[panel], entry.lease == lease.leaseID else { return nil }
        return entry.block
    }

    /// Removes and returns every entry that may no longer decide at `now`, with why.
    public mutating func expire(lease: NodeLeaseStateMachine, now: Instant) -> [(panel: String, block: FenceBlock, reason: StepDownReason)] {
        let safe = lease.isSafe(at: now)
        let reason: StepDownReason
        switch lease.state {
        case .held: reason = safe ? .leaseLost : .leaseDeadline
        case .lost, .absent, .granting: reason = .leaseLost
        }
        let ended = entries.filter { !safe || $0.value.lease != lease.leaseID }
        for panel in ended.keys { entries[panel] = nil }
        return ended.map { ($0.key, $0.value.block, reason) }.sorted { $0.panel < $1.panel }
    }

    /// Removes and returns everything (shutdown).
    public mutating func removeAll() -> [(panel: String, block: FenceBlock)] {
        defer { entries = [:] }
        return entries.map { ($0.key, $0.value.block) }.sorted { $0.panel < $1.panel }
    }
}
