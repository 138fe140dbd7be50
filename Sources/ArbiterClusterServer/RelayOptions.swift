/// The relay transport's bounds and timing (`RelayNetwork`). The defaults are the
/// documented ones (docs/CLUSTER.md, "Relay links (transport)"); tests shrink them.
public struct RelayOptions: Sendable {
    /// Bytes one peer's outgoing messages may occupy, queued and unwritten together. Past
    /// it the peer is not reading: its link is closed and reported down, and what was
    /// queued is dropped. Default 64 MiB.
    public var maxOutboundBytes = 64 << 20
    /// How long a handshake may take: a dial from its connect, an accepted link from its
    /// hand-off by the reactor. Default 2 s. On a LAN it takes a millisecond or two (one
    /// round trip and two HMACs), and the test suite saw a node starved of CPU for 800 ms
    /// at worst, so a healthy node meets it even under load; while a peer is cut off every
    /// relayed press waits for the dial under way to fail before it is answered `ERROR
    /// unavailable` (5 s before). An acceptor waiting longer than its dialer would only hold
    /// a slot (`maxPendingHandshakes`) for a handshake nobody will finish.
    public var handshakeTimeoutMs = 2_000
    /// The first wait before dialling a node again after a failure, doubled per failure.
    /// Default 50 ms.
    public var firstRetryMs: Int64 = 50
    /// The longest wait between dials. Default 1 s.
    public var maxRetryMs: Int64 = 1_000
    /// How often an up link sends a ping, and how long it may hear nothing at all (pings
    /// included) before it is closed as cut off. A peer behind a lost route or a pulled
    /// cable sends no FIN and no reset, and TCP alone would wait for minutes; closing it
    /// answers what was relayed on it (`ERROR unavailable`), ends its sessions' grants at
    /// the leader (`reason=disconnect`) and dials again. Defaults 500 ms and 2 s: inside
    /// the default lease TTL (3 s), so a cut-off node's sessions end no later than a dead
    /// node's would.
    public var pingIntervalMs = 500
    public var silenceTimeoutMs = 2_000
    /// How long after it was read a frame may still be passed on (and the output it
    /// makes written): the silence timeout less a ping interval. The other end closes a
    /// link it has not heard from for `silenceTimeoutMs` and ends this node's sessions on
    /// it; it last heard this node at most a ping interval before this node stopped (a
    /// pause, a cut), so what this node read before stopping, or reads after a gap this
    /// long, may already be overtaken there. The link is closed instead, and the panels it
    /// served resynchronise (docs/CLUSTER.md, "A paused node").
    public var staleAfterMs: Int64 { Int64(max(1, silenceTimeoutMs - pingIntervalMs)) }
    /// Inbound handshakes under way at once; more are refused at once, so a flood of
    /// `RELAY-` connections cannot hold descriptors for the handshake timeout. Default 64.
    public var maxPendingHandshakes = 64
    /// Of those, from one source address (an IPv6 one by its /64). Default 8: a node dials
    /// another one link at a time, so 8 leaves room for several nodes behind one address
    /// (one machine, a NAT) while one stranger takes no more than 8.
    public var maxPendingHandshakesPerAddress = 8
    /// Of `maxPendingHandshakes`, how many only the addresses of registered nodes may take,
    /// so that strangers from any number of addresses never shut a node of the cluster out
    /// (`RelayHandshakeSlots`). Default 16.
    public var handshakesReservedForNodes = 16
    /// How often a run of refused handshakes is summed up in the log, one line per kind at
    /// most (`RelayRefusalEpisodes`). Default 10 s.
    public var refusalLogIntervalMs = 10_000
    /// How long the relay loop, out of frames, looks for the next ones before it blocks,
    /// at most (`IdleSpin`); 0: never. The server sets it from
    /// `ServerConfiguration.idleSpinNs`. Default 0.
    public var idleSpinNs: Int64 = 0

    public init() {}
}
