import ArbiterCore
import ArbiterIO
import ArbiterWire

/// One TCP peer of any kind: ArbiterIO's `Channel` (descriptor, slot, bounded output)
/// with the session on top.
///
/// Its fields have two owners, and each group says which: the reactor's queue (the
/// socket's reading side and the running of its commands), and the channel's lock
/// (`withLock`: output, and everything another thread may touch).
/// Hot properties are `@exclusivity(unchecked)`: their owner (named below) already
/// serializes every access, and the runtime check was a large share of each request.
package final class Connection: Channel, @unchecked Sendable {
    package let session: SessionID
    let peer: String
    /// The client's address without the port (for per-address budgets and names).
    let address: String
    /// The reactor reading this socket (the channel's loop, as the server's subclass).
    package var reactor: Reactor { unsafeDowncast(loop, to: Reactor.self) }

    // MARK: Owned by `reactor.queue`

    /// The connection's life cycle: what its bytes are for, and how it ends. Bound to
    /// the reactor's queue: a debug build traps any other caller (free in release).
    var machine: ConnectionStateMachine {
        @inline(__always) get {
            loop.assertOnQueue()
            return boundMachine
        }
        @inline(__always) _modify {
            loop.assertOnQueue()
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
    /// When the bytes of its commands now being run arrived (`EventLoop.arrivalNanos`),
    /// on the server clock. Set at each read: a connection is read once per batch, and
    /// its presses deferred to the batch's end run before its next read.
    @exclusivity(unchecked) var arrivedAt: Int64 = 0
    /// The session's command token bucket.
    @exclusivity(unchecked) var tokens: Double = 0
    @exclusivity(unchecked) var tokensAt: Int64 = 0

    // MARK: Also owned by `reactor.queue`: the session, as its commands see it

    @exclusivity(unchecked) package var name: String
    @exclusivity(unchecked) package var key: String?
    /// The form replies to text commands are written in (JSON after `HELLO format=json`).
    @exclusivity(unchecked) var format: WireFormat = .text
    /// Panels this session joined or pressed in; a disconnect visits each of them.
    @exclusivity(unchecked) var touchedPanels: [Int] = []

    /// Notes a panel this session joined or pressed in (the first time only, so the
    /// lock is not taken per press).
    @inline(__always) func touch(_ panel: Int) {
        guard !touchedPanels.contains(panel) else { return }
        touchedPanels.append(panel)
        withLock { touched.append(panel) }
    }

    // MARK: Guarded by `withLock` (the channel's lock)

    /// The form events are written in.
    @exclusivity(unchecked) package var eventFormat: WireFormat = .text
    /// Whether output lines are sent as they are or each as a WebSocket text frame.
    @exclusivity(unchecked) var framing: Framing = .lines
    /// `touchedPanels` again, for KICK, which runs in another session's context.
    @exclusivity(unchecked) var touched: [Int] = []
    /// Cluster mode: output waiting behind replies of relayed commands (`ReplyOrder`).
    @exclusivity(unchecked) var replyOrder = ReplyOrder()

    init(
        session: SessionID, fd: Int32, peer: String, reactor: Reactor, acceptedAt: Instant, admission: Admission,
        limits: ConnectionLimits, outboundLimit: Int, outputBudget: OutputBudget, sink: EmbeddedSink? = nil
    ) {
        self.boundMachine = ConnectionStateMachine(admission: admission, limits: limits, acceptedAt: acceptedAt)
        self.session = session
        self.peer = peer
        self.address = KeyFailureBudget.address(ofPeer: peer)
        self.acceptedAt = acceptedAt
        self.lastReadAt = acceptedAt
        // In cluster mode the number starts with the node's range (`SessionID.perNode`);
        // the guest name keeps the short count, as on a single node.
        self.name = "guest-\(session.number % SessionID.perNode)"
        super.init(
            fd: fd, generation: UInt32(truncatingIfNeeded: session.number), loop: reactor, outboundLimit: outboundLimit,
            budget: outputBudget, sink: sink)
    }
}

/// How output lines reach the peer.
enum Framing {
    case lines
    /// Each line becomes one WebSocket text frame, without its newline.
    case websocket
}
