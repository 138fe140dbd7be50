/// A live node's registration under `/arbiter/nodes/`, as last read: where its peers reach
/// it, and the etcd lease it is under. A node whose lease lapsed registers again under a
/// new one, and its old registration's end is then not the end of its sessions
/// (`RelayIncarnations`), so the two are read, and kept, together.
public struct NodeRegistration: Equatable, Sendable {
    public let address: String
    public let lease: Int64
    /// What its relay understands (`ClusterFeatures`); empty for a node from before
    /// features were announced, or while its announcement is not read yet.
    public var features: Set<String>

    public init(address: String, lease: Int64, features: Set<String> = []) {
        self.address = address
        self.lease = lease
        self.features = features
    }
}
