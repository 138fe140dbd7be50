import ArbiterCluster

/// What the server wires to a `ClusterRuntime`. Called on the runtime's queues, never
/// under its locks; each must return quickly (hand the work to the panel's queue).
public struct ClusterRuntimeCallbacks: Sendable {
    /// This node now decides `panel` in `term`: start its core with `lastFence =
    /// fenceFloor`, handing out fences up to `block.last` only.
    public var becameLeader: @Sendable (_ panel: String, _ term: Int64, _ fenceFloor: UInt64, _ block: FenceBlock) -> Void
    /// More fences for the running core, same term.
    public var fencesExtended: @Sendable (_ panel: String, _ block: FenceBlock) -> Void
    /// Stop deciding `panel` now: end the term's grants with `reason=failover`, snapshot.
    public var stopDeciding: @Sendable (_ panel: String, _ term: Int64, _ reason: StepDownReason) -> Void
    /// The panel's leader as etcd last showed it (nil node: vacant or unknown): point the
    /// panel's relay at `address`, and fence relayed messages on `term`.
    public var leaderChanged: @Sendable (_ panel: String, _ node: String?, _ address: String?, _ term: Int64?) -> Void
    /// A fence reservation for `panel` that etcd stopped (`failure`: not answering, or
    /// what it answered), or nil for one that went through: presses past the block wait
    /// until one does.
    public var fenceReservation: @Sendable (_ panel: String, _ failure: EtcdError?) -> Void

    public init(
        becameLeader: @escaping @Sendable (String, Int64, UInt64, FenceBlock) -> Void = { _, _, _, _ in },
        fencesExtended: @escaping @Sendable (String, FenceBlock) -> Void = { _, _ in },
        stopDeciding: @escaping @Sendable (String, Int64, StepDownReason) -> Void = { _, _, _ in },
        leaderChanged: @escaping @Sendable (String, String?, String?, Int64?) -> Void = { _, _, _, _ in },
        fenceReservation: @escaping @Sendable (String, EtcdError?) -> Void = { _, _ in }
    ) {
        self.becameLeader = becameLeader
        self.fencesExtended = fencesExtended
        self.stopDeciding = stopDeciding
        self.leaderChanged = leaderChanged
        self.fenceReservation = fenceReservation
    }
}
