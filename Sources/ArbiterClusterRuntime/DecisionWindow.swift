import ArbiterCluster
import ArbiterCore

/// What `ClusterRuntime.canDecide` answered for a panel, kept by the panel so that the
/// next decisions can skip the runtime's locks: it stays valid while nothing the answer
/// was computed from has changed (`generation`) and the lease's safe deadline has not
/// passed. `canDecide` is `now < safeUntil` for an unchanged lease and table, so the
/// window gives the same answer, only without two locks and a dictionary lookup.
public struct DecisionWindow: Sendable, Equatable {
    public var block: FenceBlock
    public var safeUntil: Instant
    public var generation: UInt64

    public init(block: FenceBlock, safeUntil: Instant, generation: UInt64) {
        self.block = block
        self.safeUntil = safeUntil
        self.generation = generation
    }

    /// Still `canDecide`'s answer at `now`, with the runtime's changes counted `generation`.
    public func allows(now: Instant, generation: UInt64) -> Bool {
        generation == self.generation && now < safeUntil
    }
}
