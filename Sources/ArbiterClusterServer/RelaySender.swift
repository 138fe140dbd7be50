import ArbiterServer
import ArbiterCluster

/// Where a node's relay frames go: the socket transport (`RelayNetwork`) in production,
/// an in-process hub in tests. `send` never blocks and keeps order per peer node.
/// `leaseEpoch` (0: none) marks a frame that holds only under this node's lease, as
/// `FlushList.leaseEpoch` marks a connection's output.
protocol RelaySender: AnyObject, Sendable {
    func send(_ message: RelayMessage, toNode node: String, address: String, leaseEpoch: UInt64)
    /// The same, for one frame already encoded (`RelayFrameEncoder`): the relayed press
    /// path encodes its frame itself.
    func send(encoded frame: [UInt8], toNode node: String, address: String, leaseEpoch: UInt64)
    /// Whether a link to `node` is up, so a frame for it leaves without dialling.
    func hasLinkUp(to node: String) -> Bool
}

extension RelaySender {
    func hasLinkUp(to node: String) -> Bool { true }
}
