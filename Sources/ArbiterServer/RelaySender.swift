import ArbiterCluster

/// Where a node's relay frames go: the socket transport (`RelayNetwork`) in production,
/// an in-process hub in tests. `send` never blocks and keeps order per peer node.
protocol RelaySender: AnyObject, Sendable {
    func send(_ message: RelayMessage, toNode node: String, address: String)
}
