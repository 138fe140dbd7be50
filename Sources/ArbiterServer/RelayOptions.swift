/// The relay transport's bounds and timing (`RelayNetwork`). The defaults are the
/// documented ones (docs/CLUSTER.md, "Relay links (transport)"); tests shrink them.
public struct RelayOptions: Sendable {
    /// Bytes one peer's outgoing messages may occupy, queued and unwritten together. Past
    /// it the peer is not reading: its link is closed and reported down, and what was
    /// queued is dropped. Default 64 MiB.
    public var maxOutboundBytes = 64 << 20
    /// How long a handshake may take, connecting included. Default 5 s.
    public var handshakeTimeoutMs = 5_000
    /// The first wait before dialling a node again after a failure, doubled per failure.
    /// Default 50 ms.
    public var firstRetryMs: Int64 = 50
    /// The longest wait between dials. Default 1 s.
    public var maxRetryMs: Int64 = 1_000
    /// Inbound handshakes under way at once; more are refused at once, so a flood of
    /// `RELAY-` connections cannot hold descriptors for the handshake timeout. Default 64.
    public var maxPendingHandshakes = 64

    public init() {}
}
