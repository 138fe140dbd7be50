/// Why an ownership ended; the `reason=` of RELEASED (PROTOCOL.md section 5).
public enum ReleaseReason: String, Sendable, CaseIterable {
    case up, cancel, timeout, disconnect, fired, reset, shutdown
    /// Cluster mode: the panel's leader stopped deciding; sent by each node to its own
    /// members, outside the seq chain (docs/CLUSTER.md).
    case failover

    /// Position in `allCases`, for counters kept in arrays.
    public var index: Int {
        switch self {
        case .up: 0
        case .cancel: 1
        case .timeout: 2
        case .disconnect: 3
        case .fired: 4
        case .reset: 5
        case .shutdown: 6
        case .failover: 7
        }
    }
}
