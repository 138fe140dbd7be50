/// Cluster mode could not start: etcd did not answer, or this node's config differs
/// from the cluster's. The message is what the operator reads before exit 1.
public struct ClusterStartFailure: Error, CustomStringConvertible, Sendable {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
