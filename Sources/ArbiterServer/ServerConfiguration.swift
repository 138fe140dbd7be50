import ArbiterCore
import ArbiterIO
import ArbiterJournal

/// Everything the server is started with. Defaults are the documented ones.
public struct ServerConfiguration: Sendable {
    /// Address to bind; `0.0.0.0` serves a LAN. Default `127.0.0.1`.
    public var host = "127.0.0.1"
    /// TCP port; 0 picks a free one (tests). Default 7070.
    public var port: UInt16 = 7070
    /// The panels served. Default: the embedded `demo` panel.
    public var panels: [PanelConfig] = [.demo]
    /// Longest text line in bytes; the rest of a longer line is skipped. Default 4096.
    public var maxLineBytes = 4096
    /// Unsent output a peer may accumulate before it is disconnected. Default 1 MiB.
    public var maxOutboundBytes = 1 << 20
    /// Unsent output of all peers together. Past it, the peers with the largest backlog
    /// are disconnected first (what they held is released, `reason=disconnect`) until
    /// the total is back under 90% of it. Default 256 MiB.
    public var maxTotalOutboundBytes = 256 << 20
    /// How long a silent new connection waits before it is greeted as a line peer.
    /// Default 200 ms (PROTOCOL.md section 1).
    public var welcomeDelayMs: Int64 = 200
    /// Longest HTTP request head; longer gets 431. Default 8 KiB.
    public var maxHTTPHeadBytes = 8192
    /// How long a request head (or an undecided first line) may take to arrive before
    /// the peer is answered 408 and closed (or, before any line ends, treated as a
    /// line peer). Default 10 s.
    public var headTimeoutMs: Int64 = 10_000
    /// Largest WebSocket message accepted; larger is closed with 1009. Default 64 KiB.
    public var maxWebSocketMessageBytes = 64 * 1024
    /// A WebSocket silent this long is pinged; default 30 s.
    public var webSocketPingIntervalMs: Int64 = 30_000
    /// A pinged WebSocket that sends nothing for this long is dropped; default 30 s.
    public var webSocketPongTimeoutMs: Int64 = 30_000
    /// Serve `/ws?echo=1`, which echoes messages instead of interpreting them: the same
    /// WebSocket code, for conformance suites (Autobahn). Off by default.
    public var webSocketEcho = false
    /// Largest message in echo mode (Autobahn sends up to 16 MiB).
    public var webSocketEchoMaxMessageBytes = 16 << 20
    /// Open connections at most; past it a line peer gets `ERROR server-full` and an
    /// HTTP peer 503, then the connection closes. Default 15 000.
    public var maxConnections = 15_000
    /// Connections accepted past `maxConnections` for monitoring only: on them an HTTP
    /// `GET /healthz` or `/metrics` is answered (then closed); anything else gets the
    /// server-full answer. Past this reserve too, every request gets it. Default 16.
    public var monitoringReserve = 16
    /// Commands per second each session may send (token bucket, refilled at this
    /// rate); excess gets `ERROR rate-limited` and is dropped. 0 turns it off.
    /// Default 1000.
    public var commandsPerSecond = 1000
    /// Commands a session may send in a burst above the rate. Default 2000.
    public var commandBurst = 2000
    /// A line peer that sends nothing for this long is said goodbye to and closed;
    /// 0 (the default) keeps quiet peers forever. WebSockets are pinged instead.
    public var idleTimeoutMs: Int64 = 0
    /// Append every grant, fire and release to this file and continue fences above
    /// it after a restart. Default: none (history in memory only).
    public var journalPath: String?
    /// Whether journal records are fsync'd before the replies of their batch go out.
    /// Fence reservations are always fsync'd. Default: no.
    public var journalSync = false
    /// The journal is compacted (to each panel's highest fence and last 1000 records)
    /// whenever it grows past this many bytes; 0: only when the server starts. Default 64 MiB.
    public var journalMaxBytes = 64 << 20
    /// While the journal cannot be written, one press per this interval tries the disk
    /// again (the others are refused without touching it). Default 1 s.
    public var journalRetryMs: Int64 = 1000
    /// The journal's file calls; tests put failures in here.
    var journalIO = JournalIO.system
    /// How long a graceful shutdown waits for goodbyes to be written. Default 1.5 s.
    public var shutdownGraceMs: Int64 = 1500
    /// Kernel send buffer of each accepted socket; nil (the default) leaves the kernel's
    /// autotuning. Small values make a stalled reader reach `maxOutboundBytes` sooner.
    public var socketSendBufferBytes: Int32?
    /// How long an idle reactor or relay link looks for more work before it blocks, at
    /// most (`IdleSpin`, adaptive); 0: never, the default. Opt-in: on VMs whose idle CPUs
    /// halt at once a blocked thread's wake-up costs tens of microseconds, and 200 us (the
    /// guest kernel's own halt-polling default) cuts a relayed press's latency; but a spin
    /// that keeps finding work keeps a core busy: one client sending a PING every 100-150 us
    /// held the server at 97 % of a core with 200 us, against 7.5 % with 0
    /// (docs/BENCHMARKS.md, "Idle spinning"). A CPU quota, a battery or a shared VM pays.
    public var idleSpinNs: Int64 = 0
    /// Reactor threads reading sockets. 0 (the default) means one per core, but no
    /// more than there are panels: a panel's decisions are serial anyway, and a second
    /// reactor on one panel only adds contention for its queue.
    public var reactorCount = 0
    /// Whether client sockets carry the kernel's receive stamp, which buzzer rounds rank
    /// by (`ArrivalStamp`): nil (the default) when some panel has a buzzer group and the
    /// server runs on the system clock. Without it, the time a socket was read.
    public var arrivalStamps: Bool?
    /// The listen backlog: connections the kernel completes before they are accepted.
    /// nil (the default) takes the system maximum, `/proc/sys/net/core/somaxconn`, so a
    /// storm of reconnecting kiosks is queued rather than dropped into SYN retries.
    public var listenBacklog: Int?
    /// Wrong keys per client address (HELLO key=, Authorization: Bearer; IPv6: per /64)
    /// before each further one locks the address out for a doubling time: default 5 free,
    /// then 1 s, 2 s, 4 s ... up to 5 min; an address quiet for 15 min starts over. And
    /// wrong keys the whole server takes per second (default 50), whoever sends them.
    public var keyFailures = KeyFailureBudget.Policy()
    /// Host names (or addresses) HTTP requests may carry in `Host` besides the
    /// server's own: loopback always, the listen address, and the machine's addresses
    /// and name when listening on a wildcard. Others get 421 (DNS rebinding).
    public var allowedHosts: [String] = []
    /// Origins (`scheme://host[:port]`) whose pages may open a WebSocket besides the
    /// server's own origin; others get 403. Requests without `Origin` are not affected.
    public var allowedOrigins: [String] = []
    /// Cluster mode (`--cluster`): etcd, this node's name and address, the cluster key.
    /// nil (the default): a single node, with no etcd anywhere.
    package var cluster: (any ServerClusterSetup)? {
        get { clusterBox?.setup }
        set { clusterBox = newValue.map(ClusterSetupBox.init) }
    }
    /// Held through a class: an existential stored inline makes the configuration
    /// address-only, and every read of one of its fields on the press path then copied it
    /// whole (callgrind: about 230 instructions per DOWN/UP).
    private var clusterBox: ClusterSetupBox?
    /// Minimum level of log lines written to standard error.
    public var logLevel: LogLevel = .info
    /// Where log lines go instead of standard error; nil (the default): standard error.
    /// Tests keep them in memory, so a passing run does not print the warnings the
    /// failures it stages are meant to cause, and a test can read them.
    public var logSink: (@Sendable (String) -> Void)?
    /// Cluster mode: a connection whose first bytes are `RELAY-` (another node's relay
    /// handshake) is given to this, with the descriptor and the bytes already read; the
    /// server stops watching it and writes nothing to it (no WELCOME). Called on a
    /// reactor's queue, so it must return at once (`RelayNetwork.adopt`). nil (the
    /// default, a single node): such a line is an unknown command like any other.
    public var relayHandOff: (@Sendable (_ fd: Int32, _ peer: String, _ firstBytes: [UInt8]) -> Void)?

    public init() {}
}
