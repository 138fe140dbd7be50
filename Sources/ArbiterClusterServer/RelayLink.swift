import ArbiterServer
import ArbiterCluster
import ArbiterClusterRuntime
import ArbiterIO
import Dispatch
import Glibc

/// One relay socket, dialled or accepted, as a channel of the node's `RelayLoop`: its
/// handshake, then frames both ways.
///
/// Reading, the handshake and the liveness checks run on the loop's queue, and so do
/// `onMessage` calls, in frame order. No reactor thread and no panel queue ever waits for
/// it. Frames leave from the sender's thread while nothing waits ahead of them
/// (`RelayPeer`, `writeDirectly`: a wake-up of another thread costs tens of us, and a
/// relayed press crosses four); what the socket does not take becomes the channel's
/// output, written by the loop (EPOLLOUT), each write first asking whether frames that
/// hold only under this node's lease still stand (`Channel.outputEpoch`).
final class RelayLink: Channel, @unchecked Sendable {
    enum Phase {
        /// Dialled: the non-blocking connect is under way.
        case connecting(RelayDialer)
        /// Dialled: `RELAY-HELLO` sent, the challenge awaited.
        case dialing(RelayDialer)
        /// Accepted: `RELAY-HELLO`, then `RELAY-PROOF`, awaited.
        case accepting(RelayAcceptor)
        case up(node: String)
        case closed
    }

    /// Why a link closes; `RelayNetwork.closed` logs and counts by it.
    enum Closing {
        case error(RelayError)
        case timedOut(ms: Int)
        case overflow(limit: Int)
        case socket(String)
        case peerClosed
        case silent(ms: Int)
        case replaced
        case stopped
        /// Frames that hold only under this node's lease were still unwritten when it
        /// lapsed (a pause, a stall): dropped, so the peer resynchronises instead.
        case staleOutput

        /// A close the loop made for the socket's sake (`EventLoop.close`'s reasons).
        init(loopReason reason: String) {
            switch reason {
            case "eof": self = .peerClosed
            case "server stopped": self = .stopped
            case Closing.staleOutput.description: self = .staleOutput
            case "write failed": self = .socket("write failed")
            default:
                if reason.hasPrefix("errno "), let e = Int32(reason.dropFirst(6)) {
                    self = .socket("read: \(Sys.Failure(call: "read", errno: e).reason)")
                } else {
                    self = .socket(reason)
                }
            }
        }

        var description: String {
            switch self {
            case .error(let error): error.description
            case .timedOut(let ms): "handshake not finished within \(ms) ms"
            case .overflow(let limit): "over \(limit) bytes queued: the peer does not read"
            case .socket(let what): what
            case .peerClosed: "the peer closed the connection"
            case .silent(let ms): "nothing heard for \(ms) ms: the peer is cut off or stalled"
            case .replaced: "a newer link from the same node replaced it"
            case .stopped: "relay stopped"
            case .staleOutput: "frames decided before this node's lease lapsed (a pause or a stall) were dropped unsent"
            }
        }
    }

    /// The peer's address: `host:port` dialled, or as accepted.
    let address: String
    let dialed: Bool
    /// The node dialled (nil for an accepted link, whose node the handshake names).
    let dialingNode: String?
    let network: RelayNetwork

    // MARK: Owned by the loop's queue
    // Unchecked: only the loop's queue touches these, and the checks the compiler adds to a
    // class's properties cost every relayed frame (swift_beginAccess, callgrind).

    @exclusivity(unchecked) var phase: Phase {
        didSet {
            if case .up(let node) = phase {
                isUp = true
                upNode = node
            } else {
                isUp = false
            }
        }
    }
    /// Kept beside `phase`: asked twice per frame, where matching the enum copied it.
    @exclusivity(unchecked) private(set) var isUp = false
    /// The node of an up link, beside `phase` for the same reason: each frame read
    /// matched it out of the enum, copying the enum (about 60 instructions, callgrind).
    @exclusivity(unchecked) private var upNode = ""
    /// The peer whose frames this link writes (a dialled link's from the start; an
    /// accepted one's once chosen, `attach`).
    @exclusivity(unchecked) var sendingPeer: RelayPeer?
    @exclusivity(unchecked) private var decoder: RelayFrameDecoder
    /// Pings and the silence check, once the link is up (`RelayOptions.pingIntervalMs`).
    @exclusivity(unchecked) var liveness: DispatchSourceTimer?
    /// When bytes last came in, any bytes: ms of the monotonic clock.
    @exclusivity(unchecked) var lastHeardMs: Int64 = 0
    /// Why the relay closed the link itself (nil: the loop closed it for its socket).
    @exclusivity(unchecked) var closingBecause: Closing?
    /// What the sending peer dropped when the link left it (`closing`), for `closed`.
    @exclusivity(unchecked) var droppedOnClose = 0

    // MARK: Guarded by the channel's lock (written on the loop's queue only)

    /// Bytes ever appended to the output, and where each frame among them ends: what the
    /// socket took (appended less pending) counts frames written, and what is left frames
    /// lost.
    @exclusivity(unchecked) var appendedBytes = 0
    @exclusivity(unchecked) var frameEnds: [Int] = []
    @exclusivity(unchecked) var frameHead = 0

    /// A dialled link: `fd` is connecting to `address`, where `node` should answer.
    init(network: RelayNetwork, loop: RelayLoop, fd: Int32, address: String, dialingNode node: String, sending peer: RelayPeer) {
        self.network = network
        self.address = address
        self.dialed = true
        self.dialingNode = node
        self.sendingPeer = peer
        self.decoder = RelayFrameDecoder(limits: network.limits)
        self.phase = .connecting(
            RelayDialer(node: network.node, key: network.key, nonce: RelayNonce.draw(), expectedPeer: node, limits: network.limits))
        super.init(
            fd: fd, generation: loop.nextGeneration(), loop: loop, outboundLimit: network.options.maxOutboundBytes, budget: loop.budget,
            sink: nil)
    }

    /// An accepted link, its first bytes already read by the reactor.
    init(network: RelayNetwork, loop: RelayLoop, fd: Int32, address: String) {
        self.network = network
        self.address = address
        self.dialed = false
        self.dialingNode = nil
        self.decoder = RelayFrameDecoder(limits: network.limits)
        self.phase = .accepting(RelayAcceptor(node: network.node, key: network.key, nonce: RelayNonce.draw(), limits: network.limits))
        super.init(
            fd: fd, generation: loop.nextGeneration(), loop: loop, outboundLimit: network.options.maxOutboundBytes, budget: loop.budget,
            sink: nil)
    }

    /// The node at the other end once the handshake named it; the dialled one before.
    var node: String? {
        if case .up(let node) = phase { return node }
        return dialingNode
    }

    /// In the loop's table: the handshake's deadline starts (it runs from the hand-over,
    /// `deadline`: a slot is held from then), and an accepted link handles `firstBytes`;
    /// unless `stop` came first. On the loop's queue.
    func started(firstBytes: [UInt8], deadline: DispatchTime, stopped: Bool) {
        loop.assertOnQueue()
        guard loop.holds(self) else { return }
        if stopped { return close(because: .stopped) }
        let timeout = network.options.handshakeTimeoutMs
        // Held strongly till then (a weak reference would give the link a side table, and
        // every retain of it on the press path the slow way).
        loop.queue.asyncAfter(deadline: deadline) { [self] in
            switch phase {
            case .connecting, .dialing, .accepting: close(because: .timedOut(ms: timeout))
            case .up, .closed: break
            }
        }
        if !firstBytes.isEmpty { firstBytes.withUnsafeBufferPointer { received($0) } }
    }

    /// This accepted link was chosen to carry `peer`'s frames. On the loop's queue.
    func attach(_ peer: RelayPeer) {
        loop.assertOnQueue()
        guard isUp else {
            network.lost(self, by: peer, unwrittenFrames: 0)
            return
        }
        sendingPeer = peer
        pull()
    }

    /// Writes what it can of `frame` at once, from the sender's thread: the peer calls it
    /// under its lock, only while this link is up and holds nothing unwritten, so no
    /// write on the loop can be under way, and the descriptor stays open (the loop closes
    /// it only after `leavingPeer` took the link from the peer under that lock). Returns the
    /// bytes written; the peer queues the rest for `pull`. A failed write returns 0 and
    /// the loop's read or write meets the error.
    func writeDirectly(_ frame: [UInt8]) -> Int {
        let result = frame.withUnsafeBytes { Sys.write(fd, $0) }
        if case .bytes(let n) = result { return n }
        return 0
    }

    /// Takes what the sending peer queued and writes it. On the loop's queue.
    func pull() {
        loop.assertOnQueue()
        guard isUp, let peer = sendingPeer, let (bytes, sizes, epoch) = peer.take(for: self) else { return }
        guard !bytes.isEmpty else { return }
        let appended = withLock { () -> Bool in
            guard acceptsOutput else { return false }
            if epoch != 0 { markOutputEpoch(epoch) }
            appendingOutput { $0 += bytes }
            for size in sizes {
                appendedBytes += size
                frameEnds.append(appendedBytes)
            }
            return true
        }
        if appended { writeOut() }
    }

    // MARK: Reading

    func received(_ bytes: UnsafeBufferPointer<UInt8>) {
        let now = SystemClock.monotonic.milliseconds()
        let gap = now - lastHeardMs
        lastHeardMs = now
        if isUp {
            // Nothing heard for this long (this node paused, or the link cut off): the
            // other end may have closed it already and ended this node's sessions, and
            // what waited in the socket can be overtaken. Resynchronise instead.
            guard gap < network.options.staleAfterMs else { return close(because: .silent(ms: Int(clamping: gap))) }
            decoder.append(bytes)
            return deliver(from: upNode)
        }
        switch phase {
        case .connecting:
            return
        case .dialing(var dialer):
            do {
                switch try dialer.receive(bytes) {
                case .needMore:
                    phase = .dialing(dialer)
                case .established(let node, let proof, let leftover):
                    // Written with the frames that waited for the link (`becomeUp`).
                    say(proof, now: false)
                    becomeUp(node, leftover: leftover)
                }
            } catch {
                close(because: .error(error))
            }
        case .accepting(var acceptor):
            do {
                let output = try acceptor.receive(bytes)
                phase = .accepting(acceptor)
                if !output.send.isEmpty {
                    say(output.send)
                    guard !isClosed else { return }
                }
                if let node = output.peer {
                    // Two nodes under one name would take each other's links and sessions.
                    guard node != network.node else { return close(because: .error(.notARelayPeer("the peer uses this node's own name"))) }
                    becomeUp(node, leftover: output.leftover)
                }
            } catch {
                close(because: .error(error))
            }
        case .up, .closed:
            return
        }
    }

    var isClosed: Bool {
        if case .closed = phase { return true }
        return false
    }

    private func becomeUp(_ node: String, leftover: [UInt8]) {
        phase = .up(node: node)
        network.established(self, node: node)
        guard isUp else { return }
        startLiveness()
        if let peer = sendingPeer {
            peer.linkReady(self, holding: withLock { pending })
            pull()
        }
        // The proof, if the peer had nothing to pull behind it.
        guard isUp else { return }
        writeOut()
        guard isUp, !leftover.isEmpty else { return }
        decoder.append(leftover)
        deliver(from: node)
    }

    private func deliver(from node: String) {
        do {
            while isUp, let message = try decoder.next() {
                if case .ping = message { continue }
                network.received(message, from: node)
            }
        } catch {
            close(because: .error(error))
        }
    }
}
