import ArbiterCore
import ArbiterWire
import Synchronization

/// One TCP peer of any kind.
///
/// Its fields have two owners, and each group says which: the reactor's queue (the
/// socket's reading side and the running of its commands), and the lock in `shared`
/// (output, and everything another thread may touch).
/// Hot properties are `@exclusivity(unchecked)`: their owner (named below) already
/// serializes every access, and the runtime check was a large share of each request.
final class Connection: @unchecked Sendable {
    let session: SessionID
    let fd: Int32
    let peer: String
    /// The client's address without the port (for per-address budgets and names).
    let address: String
    let reactor: Reactor
    /// The server's total of unsent output, kept here so appends need not go through
    /// the reactor's unowned reference to the server.
    let outputBudget: OutputBudget

    // MARK: Owned by `reactor.queue`

    /// Where in the reactor's table the connection sits; part of its epoll data.
    @exclusivity(unchecked) var slot = -1
    @exclusivity(unchecked) var mode: ConnectionMode = .detecting([])
    /// Set once the peer is classified; `mode` says `.closing` by the time it is closed.
    @exclusivity(unchecked) var kind = PeerKind.unknown
    /// A line peer's framing state (kept out of `mode` so that reading does not move it
    /// in and out of an enum on every read).
    @exclusivity(unchecked) var framer = LineFramer(maxLineBytes: 0)
    let acceptedAt: Instant
    /// Since when a request head or first line has been arriving unfinished.
    @exclusivity(unchecked) var waitingSince: Instant?
    /// When bytes last arrived.
    @exclusivity(unchecked) var lastReadAt: Instant
    /// A ping sent to a silent WebSocket, waiting for any reply.
    @exclusivity(unchecked) var pingSentAt: Instant?
    /// Accepted past `maxConnections`: told so, then closed. Set before registration.
    var overCapacity = false
    /// Accepted past `maxConnections` and the monitoring reserve: nothing is served.
    var pastReserve = false
    /// The session's command token bucket.
    @exclusivity(unchecked) var tokens: Double = 0
    @exclusivity(unchecked) var tokensAt: Int64 = 0

    // MARK: Also owned by `reactor.queue`: the session, as its commands see it

    @exclusivity(unchecked) var name: String
    @exclusivity(unchecked) var key: String?
    /// The form replies to text commands are written in (JSON after `HELLO format=json`).
    @exclusivity(unchecked) var format: WireFormat = .text
    /// Panels this session joined or pressed in; a disconnect visits each of them.
    @exclusivity(unchecked) var touchedPanels: [Int] = []

    var isWebSocket: Bool { shared.withLock { $0.framing == .websocket } }

    /// Notes a panel this session joined or pressed in (the first time only, so the
    /// lock is not taken per press).
    @inline(__always) func touch(_ panel: Int) {
        guard !touchedPanels.contains(panel) else { return }
        touchedPanels.append(panel)
        shared.withLock { $0.touched.append(panel) }
    }
    /// After QUIT (or once closed) the remaining commands are dropped.
    @exclusivity(unchecked) var stopsRunning = false

    // MARK: Guarded by `shared`

    struct Shared {
        /// Unsent output; `outStart` bytes of it are already written.
        var out: [UInt8] = []
        var outStart = 0
        /// The descriptor is closed; nothing may be written or registered any more.
        var closed = false
        /// Output is waiting for EPOLLOUT.
        var waitingWritable = false
        /// Someone will flush soon (it is on a flush list).
        var dirty = false
        /// Close once everything pending is written (QUIT, HTTP errors).
        var closeAfterFlush = false
        /// The last thing was sent (a WebSocket close frame): later output is dropped.
        var sealed = false
        /// The form events are written in.
        var eventFormat: WireFormat = .text
        /// Unsent bytes allowed before the peer counts as not reading.
        var outboundLimit: Int
        /// Whether output lines are sent as they are or each as a WebSocket text frame.
        var framing: Framing = .lines
        var pending: Int { out.count - outStart }
        /// `touchedPanels` again, for KICK, which runs in another session's context.
        var touched: [Int] = []
        /// The part of `pending` counted in the server's total (`OutputBudget`), in
        /// whole 4 KiB units, so a small reply written at once never touches the total.
        var accounted = 0
    }

    let shared: Locked<Shared>

    init(session: SessionID, fd: Int32, peer: String, reactor: Reactor, acceptedAt: Instant, outboundLimit: Int, outputBudget: OutputBudget) {
        self.outputBudget = outputBudget
        self.shared = Locked(Shared(outboundLimit: outboundLimit))
        self.session = session
        self.fd = fd
        self.peer = peer
        self.address = KeyFailureBudget.address(ofPeer: peer)
        self.reactor = reactor
        self.acceptedAt = acceptedAt
        self.lastReadAt = acceptedAt
        self.name = "guest-\(session.number)"
    }
}

/// What the reactor does with a connection's bytes.
enum ConnectionMode {
    /// Not yet known to be HTTP or a line peer: the first bytes, kept for replay.
    case detecting([UInt8])
    /// A line peer; its framer is `Connection.framer`.
    case line
    case http(HTTPRequestParser)
    case websocket(WebSocketReader, echo: Bool)
    /// Reading is over; output is drained, then the connection closes.
    case closing
}

/// How output lines reach the peer.
enum Framing {
    case lines
    /// Each line becomes one WebSocket text frame, without its newline.
    case websocket
}
