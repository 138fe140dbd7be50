import ArbiterServer
import ArbiterCluster
import ArbiterClusterRuntime
import ArbiterIO
import Dispatch

/// One relay socket, dialled or accepted, as a channel of the node's `RelayLoop`: its
/// handshake, then frames both ways.
///
/// Reading, the handshake and the liveness checks run on the loop's queue, and so do
/// `onMessage` calls, in frame order. Output is the channel's, under its lock: the
/// sending `RelayPeer` appends a frame from its own thread and writes it at once when
/// nothing waits ahead of it (a wake-up of another thread costs tens of us, and a relayed
/// press crosses four); what the socket does not take leaves on EPOLLOUT. Each write first
/// asks whether frames that hold only under this node's lease still stand
/// (`Channel.outputEpoch`, `RelayNetwork.outputStands`).
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

        /// A close the loop made for the socket's sake (`EventLoop.close`'s reasons).
        init(loopReason reason: String) {
            switch reason {
            case "eof": self = .peerClosed
            case "server stopped": self = .stopped
            case Closing.staleOutput.description: self = .staleOutput
            default:
                if reason.hasPrefix("errno "), let e = Int32(reason.dropFirst(6)) {
                    self = .socket("read: \(Sys.Failure(call: "read", errno: e).reason)")
                } else {
                    self = .socket(reason)
                }
            }
        }
    }

    /// The peer's address: `host:port` dialled, or as accepted.
    let address: String
    let dialed: Bool
    /// The node dialled (nil for an accepted link, whose node the handshake names).
    let dialingNode: String?
    /// The peer that dialled this link and writes to it (nil for an accepted link, which a
    /// peer may take up later: `RelayPeer.dialIfNeeded`).
    let dialingPeer: RelayPeer?
    let network: RelayNetwork

    // MARK: Owned by the loop's queue

    private(set) var phase: Phase {
        didSet {
            if case .up = phase { isUp = true } else { isUp = false }
        }
    }
    /// Kept beside `phase`: asked for every frame, where matching the enum copied it.
    private(set) var isUp = false
    private var decoder: RelayFrameDecoder
    /// When bytes last came in, any bytes: ms of the monotonic clock.
    private var lastHeardMs: Int64 = 0
    /// Why the relay closed the link itself (nil: the loop closed it for its socket).
    private var closingBecause: Closing?

    // MARK: Guarded by the channel's lock

    /// Bytes ever appended, and where each frame among them ends: what the socket took
    /// (appended less pending) counts frames written, and what is left frames lost.
    private var appendedBytes = 0
    private var frameEnds: [Int] = []
    private var frameHead = 0

    /// A dialled link: `fd` is connecting to `address`, where `node` should answer.
    init(network: RelayNetwork, loop: RelayLoop, fd: Int32, address: String, dialingNode node: String, sending peer: RelayPeer) {
        self.network = network
        self.address = address
        self.dialed = true
        self.dialingNode = node
        self.dialingPeer = peer
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
        self.dialingPeer = nil
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

    /// In the loop's table: the handshake's deadline starts, and an accepted link handles
    /// `firstBytes`; unless a close came first (`stopped`, or one asked for before the
    /// link was in the table). On the loop's queue.
    func started(firstBytes: [UInt8] = [], stopped: Bool) {
        guard loop.holds(self) else { return }
        if let early = stopped ? .stopped : closingBecause {
            closingBecause = nil
            return close(because: early)
        }
        let timeout = network.options.handshakeTimeoutMs
        loop.queue.asyncAfter(deadline: .now() + .milliseconds(timeout)) { [weak self] in
            guard let self else { return }
            switch phase {
            case .connecting, .dialing, .accepting: close(because: .timedOut(ms: timeout))
            case .up, .closed: break
            }
        }
        if !firstBytes.isEmpty { firstBytes.withUnsafeBufferPointer { received($0) } }
    }

    /// The dialled socket is connected: the hello goes first, written by the loop next.
    func connected() {
        guard case .connecting(let dialer) = phase else { return }
        phase = .dialing(dialer)
        _ = withLock { appendBytes(dialer.hello, frame: false) }
    }

    // MARK: Reading

    func received(_ bytes: UnsafeBufferPointer<UInt8>) {
        let now = SystemClock.monotonic.milliseconds()
        let gap = now - lastHeardMs
        lastHeardMs = now
        switch phase {
        case .connecting, .closed:
            return
        case .dialing(var dialer):
            do {
                switch try dialer.receive(bytes) {
                case .needMore:
                    phase = .dialing(dialer)
                case .established(let node, let proof, let leftover):
                    // Written with the frames that waited for the link (`becomeUp`).
                    _ = withLock { appendBytes(proof, frame: false) }
                    becomeUp(node, leftover: leftover)
                }
            } catch {
                close(because: .error(error))
            }
        case .accepting(var acceptor):
            do {
                let output = try acceptor.receive(bytes)
                phase = .accepting(acceptor)
                if !output.send.isEmpty { say(output.send) }
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
        }
    }

    private func becomeUp(_ node: String, leftover: [UInt8]) {
        phase = .up(node: node)
        network.established(self, node: node)
        guard isUp else { return }
        // What waited for the link follows the handshake's last line.
        dialingPeer?.linkReady(self)
        writeNow(directly: false)
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

    // MARK: Liveness

    /// Closes a link that has been silent too long, else pings one that has nothing on its
    /// way (frames on their way are heard as well as a ping). On the loop's queue.
    func checkLiveness(now: Int64) {
        guard isUp else { return }
        let silence = network.options.silenceTimeoutMs
        if now - lastHeardMs > Int64(silence) {
            return close(because: .silent(ms: silence))
        }
        let ping = withLock { () -> Bool in
            guard pending == 0 else { return false }
            return appendBytes(RelayLink.pingFrame, frame: false)
        }
        if ping { writeNow(directly: false) }
    }

    static let pingFrame = RelayFrameEncoder.encode(.ping)

    // MARK: Writing

    /// Appends `bytes` (one frame if `frame`; a ping or a handshake line is none).
    /// Under the lock; false if the link takes no more output.
    private func appendBytes(_ bytes: [UInt8], frame: Bool) -> Bool {
        guard acceptsOutput else { return false }
        appendingOutput { $0 += bytes }
        appendedBytes += bytes.count
        if frame { frameEnds.append(appendedBytes) }
        _ = appended()
        return true
    }

    enum Appended {
        /// The caller writes it (`writeNow`): nothing was being written ahead of it.
        case write
        /// Whoever appended ahead of it writes it too.
        case queued
        /// It would pass the bound: not appended.
        case overflow
        /// The link takes no more output (it is closing): not appended.
        case closed
    }

    /// Appends one frame, under the lock, unless the unwritten bytes would pass `limit`.
    /// `leaseEpoch` (0: none) marks it as holding only under this node's lease.
    func append(frame: [UInt8], leaseEpoch: UInt64, limit: Int) -> Appended {
        guard acceptsOutput else { return .closed }
        guard pending + frame.count <= limit else { return .overflow }
        if leaseEpoch != 0 { markOutputEpoch(leaseEpoch) }
        appendingOutput { $0 += frame }
        appendedBytes += frame.count
        frameEnds.append(appendedBytes)
        switch appended() {
        case .needsFlush: return .write
        case .queued, .overBudget, .overflow, .dropped: return .queued
        }
    }

    /// Appends frames queued while no link was up (`sizes` each), under the lock.
    func append(frames bytes: [UInt8], sizes: [Int], leaseEpoch: UInt64) -> Bool {
        guard acceptsOutput else { return false }
        if leaseEpoch != 0 { markOutputEpoch(leaseEpoch) }
        appendingOutput { $0 += bytes }
        for size in sizes {
            appendedBytes += size
            frameEnds.append(appendedBytes)
        }
        _ = appended()
        return true
    }

    /// A handshake line, written at once. On the loop's queue.
    private func say(_ bytes: [UInt8]) {
        guard withLock({ appendBytes(bytes, frame: false) }) else { return }
        writeNow(directly: false)
    }

    /// Writes what the socket takes now; the rest waits for EPOLLOUT. `directly`: from a
    /// sending thread, not the loop. Any thread.
    func writeNow(directly: Bool) {
        switch flush() {
        case .done, .closeNow: break
        case .failed: loop.requestClose(self, reason: "write failed")
        case .stale: loop.requestClose(self, reason: loop.staleOutputReason)
        }
        countWritten(directly: directly)
    }

    /// Counts the frames the socket took since the last count. Any thread.
    func countWritten(directly: Bool) {
        let frames = withLock { () -> Int in
            // Output dropped (the link closes) was not written: it stays uncounted.
            guard acceptsOutput else { return 0 }
            let written = appendedBytes - pending
            let before = frameHead
            while frameHead < frameEnds.count, frameEnds[frameHead] <= written { frameHead += 1 }
            let counted = frameHead - before
            if frameHead == frameEnds.count {
                frameEnds.removeAll(keepingCapacity: true)
                frameHead = 0
            } else if frameHead >= 1024 {
                frameEnds.removeFirst(frameHead)
                frameHead = 0
            }
            return counted
        }
        if frames > 0 { network.wrote(frames: frames, directly: directly) }
    }

    // MARK: Closing

    /// Closes the link once: a refused handshake first gets its `RELAY-REFUSED` line.
    /// On the loop's queue.
    func close(because closing: Closing) {
        guard closingBecause == nil else { return }
        guard loop.holds(self) else {
            // Not in the table yet (the peer's sends may overtake `RelayNetwork.begin`):
            // `started` closes it once it is.
            if slot < 0 { closingBecause = closing }
            return
        }
        closingBecause = closing
        if case .accepting = phase {
            switch closing {
            case .error(let error): say(error.refusalLine)
            case .timedOut: say(Array("RELAY-REFUSED \(closing.description)\n".utf8))
            case .overflow, .socket, .peerClosed, .silent, .replaced, .stopped, .staleOutput: break
            }
        }
        loop.close(self, reason: closing.description)
    }

    /// The loop closed the socket (`EventLoop.closed`), for the relay's reason or its own.
    /// On the loop's queue.
    func closed(reason: String) {
        let was = phase
        phase = .closed
        let closing = closingBecause ?? Closing(loopReason: reason)
        closingBecause = closing
        let unwrittenFrames = withLock { () -> Int in
            defer {
                frameEnds = []
                frameHead = 0
            }
            return frameEnds.count - frameHead
        }
        network.socketClosed()
        network.closed(self, was: was, because: closing, unwrittenFrames: unwrittenFrames)
    }
}
