import ArbiterServer
import ArbiterCluster
import ArbiterClusterRuntime
import ArbiterIO
import Dispatch
import Glibc
import Synchronization

/// One relay socket, dialled or accepted: its handshake, then frames both ways.
///
/// Everything here belongs to `queue`, a serial queue of its own: a read source and a
/// write source on the non-blocking socket run there, and so do `onMessage` calls, in
/// frame order. No reactor thread and no panel queue ever waits for it.
final class RelayLink: @unchecked Sendable {
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

    let fd: Int32
    /// The peer's address: `host:port` dialled, or as accepted.
    let address: String
    let dialed: Bool
    /// The node dialled (nil for an accepted link, whose node the handshake names).
    let dialingNode: String?
    let queue: DispatchQueue
    let network: RelayNetwork
    /// Set by the sending peer when it queued frames for `pull` (and woke `queue` for
    /// them): a link lingering in poll, which holds `queue`, pulls them at its next
    /// wake-up instead of after the linger. Read without the peer's lock, which the
    /// reactors' sends take: looking for frames after every poll met them on it.
    let pullWanted = Atomic<Bool>(false)

    // MARK: Owned by `queue`
    // Unchecked: only `queue` touches these, and the checks the compiler adds to a class's
    // properties cost every relayed frame (swift_beginAccess, callgrind).

    @exclusivity(unchecked) var phase: Phase {
        didSet {
            if case .up = phase { isUp = true } else { isUp = false }
        }
    }
    /// Kept beside `phase`: asked twice per frame, where matching the enum copied it.
    @exclusivity(unchecked) private(set) var isUp = false
    /// The peer whose frames this link writes (a dialled link's from the start; an
    /// accepted one's once chosen, `attach`).
    @exclusivity(unchecked) var sendingPeer: RelayPeer?
    @exclusivity(unchecked) private var decoder: RelayFrameDecoder
    @exclusivity(unchecked) var out: [UInt8] = []
    @exclusivity(unchecked) var outStart = 0
    /// Where each frame in `out` ends, to count frames written and frames lost.
    @exclusivity(unchecked) var frameEnds: [Int] = []
    /// The lease epoch of the oldest frame in `out` that holds only under this node's
    /// lease (0: none): checked before each write (`RelayNetwork.outputStands`).
    @exclusivity(unchecked) var outEpoch: UInt64 = 0
    @exclusivity(unchecked) var frameHead = 0
    @exclusivity(unchecked) var readSource: DispatchSourceRead?
    @exclusivity(unchecked) var writeSource: DispatchSourceWrite?
    @exclusivity(unchecked) var writeArmed = false
    @exclusivity(unchecked) var liveSources = 0
    @exclusivity(unchecked) private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
    /// How long the linger looks before it blocks in poll (`RelayOptions.idleSpinNs`).
    @exclusivity(unchecked) private var idleSpin: IdleSpin
    /// Pings and the silence check, once the link is up (`RelayOptions.pingIntervalMs`).
    @exclusivity(unchecked) var liveness: DispatchSourceTimer?
    /// When bytes last came in, any bytes: ms of the monotonic clock.
    @exclusivity(unchecked) var lastHeardMs: Int64 = 0

    /// A dialled link: `fd` is connecting to `address`, where `node` should answer.
    init(network: RelayNetwork, fd: Int32, address: String, dialingNode node: String, sending peer: RelayPeer) {
        self.network = network
        self.fd = fd
        self.address = address
        self.dialed = true
        self.dialingNode = node
        self.sendingPeer = peer
        self.decoder = RelayFrameDecoder(limits: network.limits)
        self.idleSpin = IdleSpin(maxNs: network.options.idleSpinNs)
        self.phase = .connecting(
            RelayDialer(node: network.node, key: network.key, nonce: RelayNonce.draw(), expectedPeer: node, limits: network.limits))
        self.queue = DispatchQueue(label: "arbiter.relay.link")
    }

    /// An accepted link, its first bytes already read by the reactor.
    init(network: RelayNetwork, fd: Int32, address: String) {
        self.network = network
        self.fd = fd
        self.address = address
        self.dialed = false
        self.dialingNode = nil
        self.decoder = RelayFrameDecoder(limits: network.limits)
        self.idleSpin = IdleSpin(maxNs: network.options.idleSpinNs)
        self.phase = .accepting(RelayAcceptor(node: network.node, key: network.key, nonce: RelayNonce.draw(), limits: network.limits))
        self.queue = DispatchQueue(label: "arbiter.relay.link")
    }

    /// The node at the other end once the handshake named it; the dialled one before.
    var node: String? {
        if case .up(let node) = phase { return node }
        return dialingNode
    }

    /// Starts watching the socket; an accepted link first handles `firstBytes`.
    func start(firstBytes: [UInt8] = []) {
        // From now, not from when the queue first runs the link: a slot is held from now.
        let timeout = network.options.handshakeTimeoutMs
        let deadline = DispatchTime.now() + .milliseconds(timeout)
        queue.async { [self] in
            // Closed before it started (`stop`): the descriptor is already closed.
            guard !isClosed else { return }
            let read = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
            read.setEventHandler { [weak self] in self?.readable() }
            read.setCancelHandler { [self] in sourceCancelled() }
            let write = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
            write.setEventHandler { [weak self] in self?.writable() }
            write.setCancelHandler { [self] in sourceCancelled() }
            readSource = read
            writeSource = write
            liveSources = 2
            read.resume()
            queue.asyncAfter(deadline: deadline) { [weak self] in
                guard let self else { return }
                switch phase {
                case .connecting, .dialing, .accepting: close(because: .timedOut(ms: timeout))
                case .up, .closed: break
                }
            }
            if dialed {
                // Writable once connected (or failed).
                armWrite()
            } else if !firstBytes.isEmpty {
                firstBytes.withUnsafeBufferPointer { received($0) }
            }
        }
    }

    /// This accepted link was chosen to carry `peer`'s frames. On `queue`.
    func attach(_ peer: RelayPeer) {
        guard isUp else {
            network.lost(self, by: peer, unwrittenFrames: 0)
            return
        }
        sendingPeer = peer
        pull()
    }

    /// Writes what it can of `frame` at once, from the sender's thread: the peer calls it
    /// under its lock, only while this link is up and holds nothing unwritten, so no
    /// write on `queue` can be under way. Returns the bytes written; the peer queues the
    /// rest for `pull`. A failed write returns 0 and the link's own write meets the error.
    func writeDirectly(_ frame: [UInt8]) -> Int {
        let result = frame.withUnsafeBytes { Sys.write(fd, $0) }
        if case .bytes(let n) = result { return n }
        return 0
    }

    /// Takes what the sending peer queued and writes it. On `queue`.
    func pull() {
        // Before the take: frames queued after it set the flag again.
        pullWanted.store(false, ordering: .relaxed)
        guard isUp, let peer = sendingPeer, let (bytes, sizes, epoch) = peer.take(for: self) else { return }
        guard !bytes.isEmpty else { return }
        if outEpoch == 0 { outEpoch = epoch }
        if outStart == out.count {
            out.removeAll(keepingCapacity: true)
            outStart = 0
            frameEnds.removeAll(keepingCapacity: true)
            frameHead = 0
        }
        var end = out.count
        for size in sizes {
            end += size
            frameEnds.append(end)
        }
        out += bytes
        flush()
    }

    // MARK: Reading

    private func readable() {
        guard !isClosed else { return }
        if case .connecting = phase {
            guard connected() else { return }
        }
        let started = SystemClock.monotonic.nanoseconds()
        // A bounded number of reads per wake-up, so one busy link cannot keep its queue.
        var reads = 0
        while reads < 16 {
            let result = readBuffer.withUnsafeMutableBytes { Sys.read(fd, into: $0) }
            switch result {
            case .bytes(let n):
                reads += 1
                readBuffer.withUnsafeBufferPointer { received(UnsafeBufferPointer(rebasing: $0[..<n])) }
                if case .closed = phase { return }
                // A short read has most likely emptied the socket: wait for the next frame
                // in poll at once instead of paying for a read that says so (poll answers
                // at once if more has come).
                guard n < readBuffer.count else { continue }
                switch awaitNextFrame(since: started) {
                case .readable: reads = 0
                case .quiet: return
                case .notNow: continue
                }
            case .wouldBlock:
                guard case .readable = awaitNextFrame(since: started) else { return }
                reads = 0
            case .eof:
                return close(because: .peerClosed)
            case .failed(let e):
                return close(because: .socket("read: \(Sys.Failure(call: "read", errno: e).reason)"))
            }
        }
    }

    /// After a batch, waits up to `RelayLink.lingerMs` in poll for the next frame instead
    /// of returning to Dispatch, as a reactor does after its batch: the answer to a relayed
    /// command comes about one round trip after the command left, and a Dispatch source's
    /// wake-up (its manager thread, then a worker) costs more than the round trip. Gives
    /// the queue back after `maxBusyNs` so the link's other work gets its turn, and only
    /// once the link is up (the handshake is short and has its own timer). Writes the link
    /// still owes go out when the socket takes them meanwhile.
    private func awaitNextFrame(since started: Int64) -> Lingering {
        guard isUp, SystemClock.monotonic.nanoseconds() - started < RelayLink.maxBusyNs else { return .notNow }
        var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        if writeArmed { ready.events |= Int16(POLLOUT) }
        guard idleWait(&ready) > 0 else { return .quiet }
        if ready.revents & Int16(POLLOUT) != 0 {
            flush()
            guard isUp else { return .quiet }
        }
        // Frames queued behind a backlog, or while this link lingered.
        if pullWanted.load(ordering: .acquiring) { pull() }
        guard isUp else { return .quiet }
        // Woken by the pull alone (the spin looks for it): go on waiting for frames.
        if ready.revents == 0 { return .readable }
        return ready.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 ? .readable : .quiet
    }

    /// `poll` for the linger: spun for the window of `idleSpin` first (`IdleSpin`: the
    /// answer to a relayed command comes one round trip after it left, and a blocked
    /// thread's wake-up can cost more than that).
    private func idleWait(_ ready: inout pollfd) -> Int {
        let events = ready.events
        return idleSpin.wait(
            now: { SystemClock.monotonic.nanoseconds() },
            look: {
                ready.revents = 0
                ready.events = events
                // Frames queued for `pull` meanwhile end the spin too: they need not wait.
                if pullWanted.load(ordering: .relaxed) { return 1 }
                return Int(Glibc.poll(&ready, 1, 0))
            },
            block: { Int(Glibc.poll(&ready, 1, RelayLink.lingerMs)) })
    }

    /// What `awaitNextFrame` found.
    private enum Lingering {
        /// Bytes (or the end) are there: read again.
        case readable
        /// Nothing came within the linger, or the link closed meanwhile: back to Dispatch.
        case quiet
        /// It did not wait (the link is not up, or has had the queue long enough).
        case notNow
    }

    static let lingerMs: Int32 = 1
    static let maxBusyNs: Int64 = 5_000_000

    private func received(_ bytes: UnsafeBufferPointer<UInt8>) {
        let now = SystemClock.monotonic.milliseconds()
        let gap = now - lastHeardMs
        lastHeardMs = now
        switch phase {
        case .connecting:
            return
        case .dialing(var dialer):
            do {
                switch try dialer.receive(bytes) {
                case .needMore:
                    phase = .dialing(dialer)
                case .established(let node, let proof, let leftover):
                    out += proof
                    flush()
                    guard !isClosed else { return }
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
                    out += output.send
                    flush()
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
        case .up(let node):
            // Nothing heard for this long (this node paused, or the link cut off): the
            // other end may have closed it already and ended this node's sessions, and
            // what waited in the socket can be overtaken. Resynchronise instead.
            guard gap < network.options.staleAfterMs else { return close(because: .silent(ms: Int(clamping: gap))) }
            decoder.append(bytes)
            deliver(from: node)
        case .closed:
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
            peer.linkReady(self, holding: out.count - outStart)
            pull()
        }
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
