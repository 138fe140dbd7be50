import ArbiterCluster

/// What a `ClusterRuntime`'s control queue, its lease queue's watchdog and any caller
/// (a decision asking `canDecide`, `/metrics`) share.
struct RuntimeBook {
    /// Bumped at every change of `deciding`: a `DecisionWindow` kept by a caller is good
    /// only while nothing it was computed from changed.
    let tableChanges: ChangeCounter
    /// The panels the server was told to decide.
    var deciding = DecisionTable() {
        didSet { tableChanges.bump() }
    }
    var leaders: [String: LeaderInfo?] = [:]
    var stats = ClusterRuntimeStats()
    var registrations: [String: NodeRegistration] = [:]
    /// A step asked for by the watch is queued once, however many changes came.
    var watchStepQueued = false

    init(tableChanges: ChangeCounter) {
        self.tableChanges = tableChanges
    }
}
