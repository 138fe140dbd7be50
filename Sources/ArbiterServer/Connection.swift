import ArbiterCore
import ArbiterIO
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
    /// Tests only: output goes here instead of `fd` (which is then -1).
    let sink: EmbeddedSink?

    // MARK: Owned by `reactor.queue`

    /// Where in the reactor's table the connection sits; part of its epoll data.
    @exclusivity(unchecked) var slot = -1
    /// The connection's life cycle: what its bytes are for, and how it ends. Bound to
    /// the reactor's queue: a debug build traps any other caller (free in release).
    var machine: ConnectionStateMachine {
        @inline(__always) get {
            reactor.assertOnQueue()
            return boundMachine
        }
        @inline(__always) _modify {
            reactor.assertOnQueue()
            yield &boundMachine
        }
    }
    @exclusivity(unchecked) private var boundMachine: ConnectionStateMachine
    /// A line peer's framing state (kept out of `machine` so that reading does not move it
    /// in and out of an enum on every read).
    @exclusivity(unchecked) var framer = LineFramer(maxLineBytes: 0)
    let acceptedAt: Instant
    /// When bytes last arrived.
    @exclusivity(unchecked) var lastReadAt: Instant
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

    /// Notes a panel this session joined or pressed in (the first time only, so the
    /// lock is not taken per press).
    @inline(__always) func touch(_ panel: Int) {
        guard !touchedPanels.contains(panel) else { return }
        touchedPanels.append(panel)
        shared.withLock { $0.touched.append(panel) }
    }

    // MARK: Guarded by `shared`

    struct Shared {
        /// Unsent output and the socket's EPOLLOUT interest (ArbiterIO's half).
        var output = OutputBuffer()
        /// Whether output is accepted, and whether the socket closes once it is written.
        var gate = OutputGate.open
        /// Someone will flush soon (it is on a flush list).
        var dirty = false
        /// The form events are written in.
        var eventFormat: WireFormat = .text
        /// Unsent bytes allowed before the peer counts as not reading.
        var outboundLimit: Int
        /// Whether output lines are sent as they are or each as a WebSocket text frame.
        var framing: Framing = .lines
        var pending: Int { output.pending }
        /// `touchedPanels` again, for KICK, which runs in another session's context.
        var touched: [Int] = []
        /// The part of `pending` counted in the server's total (`OutputBudget`), in
        /// whole 4 KiB units, so a small reply written at once never touches the total.
        var accounted = 0
    }

    let shared: Locked<Shared>

    init(
        session: SessionID, fd: Int32, peer: String, reactor: Reactor, acceptedAt: Instant, admission: Admission,
        limits: ConnectionLimits, outboundLimit: Int, outputBudget: OutputBudget, sink: EmbeddedSink? = nil
    ) {
        self.sink = sink
        self.boundMachine = ConnectionStateMachine(admission: admission, limits: limits, acceptedAt: acceptedAt)
        self.outputBudget = outputBudget
        self.shared = Locked(Shared(outboundLimit: outboundLimit))
        self.session = session
        self.fd = fd
        self.peer = peer
        self.address = KeyFailureBudget.address(ofPeer: peer)
        self.reactor = reactor
        self.acceptedAt = acceptedAt
        self.lastReadAt = acceptedAt
        // In cluster mode the number starts with the node's range (ClusterSetup); the
        // guest name keeps the short count, as on a single node.
        self.name = "guest-\(session.number % ClusterSetup.sessionsPerNode)"
    }
}

/// How output lines reach the peer.
enum Framing {
    case lines
    /// Each line becomes one WebSocket text frame, without its newline.
    case websocket
}
