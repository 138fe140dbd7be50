import ArbiterCluster
import ArbiterCore

/// A lease keeper's state that its ticks (on the lease queue) and its calls' answers (on
/// the calls queue) share.
struct LeaseBook {
    var machine: NodeLeaseStateMachine
    var inFlight = 0
    var lastSent: Instant?
    var lastRenewedSentAt: Instant?
    /// Since when `machine`'s lease has been safe without a break: set by a grant, and by
    /// a renewal that came after the deadline had passed; nil while no lease is held.
    var safeSince: Instant?
    var stats = ClusterRuntimeStats()
}
