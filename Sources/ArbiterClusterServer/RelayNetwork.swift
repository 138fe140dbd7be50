import ArbiterServer
import ArbiterCluster
import ArbiterIO
import Dispatch
import Synchronization

/// The node-to-node relay transport of cluster mode: authenticated links to other nodes
/// on their normal port (docs/CLUSTER.md, "Relay links (transport)").
///
/// - `send` queues a message for a node from any thread and returns at once; one node's
///   messages to another leave on one link at a time, in order. The link is an inbound
///   one from that node if it is up, else one dialled to `address` (lazily, again after
///   a failure with a backoff of 50 ms doubling to 1 s, while something waits to go).
/// - `adopt` takes over a socket the server accepted whose first bytes are `RELAY-`, if a
///   handshake slot is free (`RelayHandshakeSlots`); refusals are logged by episode
///   (`RelayRefusalEpisodes`).
/// - The links are channels of one `RelayLoop`, ArbiterIO's event loop; what they receive
///   goes to `onMessage` on the loop's queue, in each link's frame order.
///   `onLinkUp` and `onLinkDown` are called once per link (a pair of nodes may have two,
///   one dialled each way, if both dialled before either's link was up; a newer accepted
///   link from a node is reported up before the one it replaces is reported down); `onUndelivered`
///   when queued messages were dropped: on a link that went down or a dial that failed,
///   past the outbound bound, and for an unusable address. Messages are never kept for a
///   later link: the content layer recovers with snapshots.
///
/// Callbacks run on the relay loop's queue or the peers' (never on a reactor's or a
/// panel's); they must not call `stop`.
public final class RelayNetwork: @unchecked Sendable {
    public let node: String
    let key: [UInt8]
    let log: ServerLog
    let limits: RelayLimits
    let options: RelayOptions
    private let onMessage: @Sendable (_ fromNode: String, _ message: RelayMessage) -> Void
    private let onLinkUp: @Sendable (_ node: String) -> Void
    private let onLinkDown: @Sendable (_ node: String) -> Void
    private let onUndelivered: @Sendable (_ node: String, _ count: Int) -> Void
    /// Whether frames marked with a lease epoch may still be written (`ClusterContext.
    /// outputStands`); asked at each write of a link holding such frames.
    let outputStands: @Sendable (_ leaseEpoch: UInt64) -> Bool
    /// Every link's socket (nil if its epoll descriptor could not be made: then every
    /// dial fails and every accepted link is refused, each saying so).
    let loop: RelayLoop?

    private struct Links {
        var peers: [String: RelayPeer] = [:]
        /// Accepted links that are up, by node: the newest from each node.
        var inbound: [String: RelayLink] = [:]
        /// Every link not closed yet, for `stop`.
        var open: [ObjectIdentifier: RelayLink] = [:]
        /// Accepted links still in their handshake.
        var handshakes: RelayHandshakeSlots
        var stopped = false
        var statistics = RelayStatistics()
    }

    private let links: Locked<Links>
    /// Refusals to log, and whether a tick is scheduled (`refused`).
    /// The refusal episodes, and the timer that ticks them while one is open (nil: none is):
    /// a timer, not a chain of `asyncAfter`s, so that a network that goes away ends it.
    private let refusals = Refusals((RelayRefusalEpisodes(), nil))
    /// Counted per frame outside `links`' lock: the reactors' sends and the links' reads
    /// would otherwise meet on it for every relayed press.
    private let framesIn = Atomic<Int>(0)
    private let framesOut = Atomic<Int>(0)
    private let framesWrittenDirectly = Atomic<Int>(0)

    public init(
        node: String, key: [UInt8], log: ServerLog, limits: RelayLimits = .standard, options: RelayOptions = RelayOptions(),
        onMessage: @escaping @Sendable (_ fromNode: String, _ message: RelayMessage) -> Void,
        onLinkUp: @escaping @Sendable (_ node: String) -> Void = { _ in },
        onLinkDown: @escaping @Sendable (_ node: String) -> Void,
        onUndelivered: @escaping @Sendable (_ node: String, _ count: Int) -> Void = { _, _ in },
        outputStands: @escaping @Sendable (_ leaseEpoch: UInt64) -> Bool = { _ in true }
    ) {
        self.node = node
        self.key = key
        self.log = log
        self.limits = limits
        self.options = options
        self.onMessage = onMessage
        self.onLinkUp = onLinkUp
        self.onLinkDown = onLinkDown
        self.onUndelivered = onUndelivered
        self.outputStands = outputStands
        self.links = Locked(Links(handshakes: RelayHandshakeSlots(options: options)))
        do {
            let loop = try RelayLoop(options: options, log: log, outputStands: outputStands)
            loop.start()
            self.loop = loop
        } catch {
            log.error("relay loop not started: every relay link will fail", ["reason": "\(error)"])
            self.loop = nil
        }
    }

    deinit {
        // Stopped already, unless `stop` was never called: its timers hold it otherwise.
        if let loop { loop.queue.async { loop.stop() } }
        refusals.withLock { $0.ticker?.cancel() }
    }

    // MARK: The API

    /// Queues `message` for `node`, reachable at `address` (`host:port`, its advertised
    /// address). From any thread; never waits for the network.
    public func send(_ message: RelayMessage, toNode node: String, address: String, leaseEpoch: UInt64 = 0) {
        send(encoded: RelayFrameEncoder.encode(message), toNode: node, address: address, leaseEpoch: leaseEpoch)
    }

    public func hasLinkUp(to node: String) -> Bool {
        let (peer, inbound) = links.withLock { ($0.peers[node], $0.inbound[node]) }
        return inbound != nil || peer?.outbox.withLock { $0.linkUp } == true
    }

    /// The same, for a frame already encoded (`RelayFrameEncoder`).
    public func send(encoded frame: [UInt8], toNode node: String, address: String, leaseEpoch: UInt64 = 0) {
        guard node != self.node else {
            log.warning("relay message to this node itself dropped", ["node": node])
            return dropped(1, to: node, on: nil)
        }
        let peer = links.withLock { l -> RelayPeer? in
            guard !l.stopped else { return nil }
            if let peer = l.peers[node] { return peer }
            let peer = RelayPeer(node: node, address: address, network: self)
            l.peers[node] = peer
            return peer
        }
        guard let peer else { return dropped(1, to: node, on: nil) }
        peer.enqueue(frame, address: address, limit: options.maxOutboundBytes, leaseEpoch: leaseEpoch)
    }

    /// Takes over an accepted socket whose first bytes (`firstBytes`, already read) are a
    /// relay handshake: `ServerConfiguration.relayHandOff`. `peer` is its address: for the
    /// bounds per source and for logs. `nodeAddresses`: the registered nodes' advertised
    /// addresses, whose handshakes may take the slots kept for nodes. Returns at once; the
    /// handshake runs on the relay loop.
    public func adopt(fd: Int32, peer: String, firstBytes: [UInt8], nodeAddresses: [String] = []) {
        let deadline = DispatchTime.now() + .milliseconds(options.handshakeTimeoutMs)
        let source = RelayPeerAddress(hostPort: peer)
        let fromNode = source.map { source in nodeAddresses.contains { RelayPeerAddress(hostPort: $0) == source } } ?? false
        let host = RelayAddress(peer)?.host ?? peer
        guard let loop else {
            return refuse(fd: fd, peer: peer, RelayNetwork.noLoopRefusal, kind: .gone)
        }
        let link = RelayLink(network: self, loop: loop, fd: fd, address: peer)
        let refusal = links.withLock { l -> String? in
            if l.stopped { return RelayNetwork.stoppedRefusal }
            if let busy = l.handshakes.take(ObjectIdentifier(link), from: source, fromNode: fromNode, host: host) {
                l.statistics.refusals += 1
                return busy
            }
            l.statistics.sockets += 1
            l.open[ObjectIdentifier(link)] = link
            return nil
        }
        if let refusal {
            return refuse(fd: fd, peer: peer, refusal, kind: refusal == RelayNetwork.stoppedRefusal ? .gone : .busy)
        }
        loop.queue.async { self.begin(link, firstBytes: firstBytes, deadline: deadline) }
    }

    private func refuse(fd: Int32, peer: String, _ refusal: String, kind: RelayRefusalEpisodes.Kind) {
        let line = Array("RELAY-REFUSED \(refusal)\n".utf8)
        _ = line.withUnsafeBytes { Sys.write(fd, $0) }
        Sys.close(fd)
        refused(kind, peer: peer, reason: refusal)
    }

    /// Puts a new link in the loop's table and starts its handshake. On the loop's queue.
    private func begin(_ link: RelayLink, firstBytes: [UInt8], deadline: DispatchTime) {
        let loop = unsafeDowncast(link.loop, to: RelayLoop.self)
        if link.dialed { loop.registerConnecting(link) } else { loop.register(link) }
        // Stopped while it was on its way here: `stop` closed the links of the table.
        link.started(firstBytes: firstBytes, deadline: deadline, stopped: isStopped)
    }

    /// Closes every link (each that was up is reported down) and drops what is queued.
    /// Later sends are dropped. Not from a callback: it waits for the relay loop's queue.
    public func stop() {
        let (open, peers) = links.withLock { l in
            l.stopped = true
            return (Array(l.open.values), Array(l.peers.values))
        }
        loop?.queue.sync {
            // Links not in the table yet close in `begin`, which sees `stopped`.
            for link in open where link.loop.holds(link) { link.close(because: .stopped) }
            loop?.stop()
        }
        let dropped = peers.reduce(0) { $0 + $1.dropAll() }
        links.withLock { $0.statistics.dropped += dropped }
    }

    /// Links up now.
    public var linkCount: Int { links.withLock { $0.statistics.linksUp } }

    public var statistics: RelayStatistics {
        var statistics = links.withLock { $0.statistics }
        statistics.framesIn = framesIn.load(ordering: .relaxed)
        statistics.framesOut = framesOut.load(ordering: .relaxed)
        statistics.framesWrittenDirectly = framesWrittenDirectly.load(ordering: .relaxed)
        return statistics
    }

    // MARK: From peers and links

    var isStopped: Bool { links.withLock { $0.stopped } }

    /// The accepted link from `node`, if one is up.
    func upInbound(from node: String) -> RelayLink? {
        links.withLock { $0.inbound[node] }
    }

    /// A dialled link has its socket: the loop takes it (and closes it at once if the
    /// relay stopped meanwhile).
    func started(_ link: RelayLink) {
        let deadline = DispatchTime.now() + .milliseconds(options.handshakeTimeoutMs)
        links.withLock { l in
            l.statistics.sockets += 1
            if !l.stopped { l.open[ObjectIdentifier(link)] = link }
        }
        link.loop.queue.async { self.begin(link, firstBytes: [], deadline: deadline) }
    }

    /// A link's handshake succeeded. On the loop's queue.
    func established(_ link: RelayLink, node: String) {
        let (replaced, peer) = links.withLock { l -> (RelayLink?, RelayPeer?) in
            l.statistics.linksUp += 1
            l.statistics.linksOpened += 1
            guard !link.dialed else { return (nil, nil) }
            l.handshakes.release(ObjectIdentifier(link))
            let replaced = l.inbound[node]
            l.inbound[node] = link
            return (replaced, l.peers[node])
        }
        log.info("relay link up", ["node": node, "peer": link.address, "dialled": link.dialed ? "yes" : "no"])
        // Up before the replaced link is even closed: a node with a link never looks gone.
        onLinkUp(node)
        if let replaced { replaced.loop.queue.async { replaced.close(because: .replaced) } }
        // Messages that wait for a dial may leave on this link at once.
        if let peer { peer.queue.async { peer.dialIfNeeded() } }
    }

    func received(_ message: RelayMessage, from node: String) {
        framesIn.add(1, ordering: .relaxed)
        onMessage(node, message)
    }

    /// A link's descriptor was closed.
    func socketClosed() {
        links.withLock { $0.statistics.sockets -= 1 }
    }

    func wrote(frames: Int, directly: Bool = false) {
        framesOut.add(frames, ordering: .relaxed)
        if directly { framesWrittenDirectly.add(frames, ordering: .relaxed) }
    }

    /// A link closed (`was` is the phase it closed in; `dropped` frames its sending peer
    /// lost with it). On the loop's queue.
    func closed(_ link: RelayLink, was: RelayLink.Phase, because closing: RelayLink.Closing, dropped: Int, sendingPeer: RelayPeer?) {
        var upNode: String?
        links.withLock { l in
            l.open[ObjectIdentifier(link)] = nil
            switch was {
            case .accepting:
                l.handshakes.release(ObjectIdentifier(link))
                l.statistics.refusals += 1
            case .connecting, .dialing:
                l.statistics.dialFailures += 1
            case .up(let node):
                upNode = node
                l.statistics.linksUp -= 1
                l.statistics.linksDown += 1
                if l.inbound[node] === link { l.inbound[node] = nil }
            case .closed:
                break
            }
            l.statistics.dropped += dropped
        }
        switch was {
        case .accepting:
            let kind: RelayRefusalEpisodes.Kind
            switch closing {
            case .timedOut: kind = .tooSlow
            case .error(.badProof): kind = .wrongKey
            case .error: kind = .notARelayPeer
            case .overflow, .socket, .peerClosed, .silent, .replaced, .stopped, .staleOutput: kind = .gone
            }
            refused(kind, peer: link.address, reason: closing.description)
        case .connecting, .dialing:
            log.warning("relay dial failed", ["node": link.dialingNode ?? "-", "address": link.address, "reason": closing.description])
        case .up(let node):
            log.warning("relay link down", ["node": node, "peer": link.address, "reason": closing.description])
        case .closed:
            break
        }
        if let upNode { onLinkDown(upNode) }
        if dropped > 0, let node = sendingPeer?.node { onUndelivered(node, dropped) }
    }

    /// An accepted link chosen for `peer` had closed before it could carry anything.
    func lost(_ link: RelayLink, by peer: RelayPeer, unwrittenFrames: Int) {
        let dropped = peer.linkGone(link, unwrittenFrames: unwrittenFrames)
        guard dropped > 0 else { return }
        links.withLock { $0.statistics.dropped += dropped }
        onUndelivered(peer.node, dropped)
    }

    private static let stoppedRefusal = "relay stopped"
    static let noLoopRefusal = "no relay loop (its epoll descriptor could not be made)"

    /// Logs a refused inbound handshake by episode (`RelayRefusalEpisodes`), and ticks the
    /// episodes while one is open.
    private func refused(_ kind: RelayRefusalEpisodes.Kind, peer: String, reason: String) {
        let (line, ticker): (RelayRefusalEpisodes.Line?, DispatchSourceTimer?) = refusals.withLock { r in
            let line = r.episodes.refused(kind, peer: peer, reason: reason)
            guard r.ticker == nil else { return (line, nil) }
            let interval = DispatchTimeInterval.milliseconds(options.refusalLogIntervalMs)
            let ticker = DispatchSource.makeTimerSource(queue: .global())
            ticker.schedule(deadline: .now() + interval, repeating: interval)
            // The episodes and the log, not the network: a weak reference to it made a side
            // table that LeakSanitizer reported when a network outlived its tests.
            ticker.setEventHandler { [refusals, log] in Self.refusalTick(refusals, log) }
            r.ticker = ticker
            return (line, ticker)
        }
        if let line { Self.write(line, to: log) }
        ticker?.resume()
    }

    private typealias Refusals = Locked<(episodes: RelayRefusalEpisodes, ticker: DispatchSourceTimer?)>

    private static func refusalTick(_ refusals: Refusals, _ log: ServerLog) {
        let lines = refusals.withLock { r in
            let lines = r.episodes.tick()
            if !r.episodes.isOpen {
                r.ticker?.cancel()
                r.ticker = nil
            }
            return lines
        }
        for line in lines { write(line, to: log) }
    }

    private static func write(_ line: RelayRefusalEpisodes.Line, to log: ServerLog) {
        switch line.message {
        case .refused:
            log.warning(line.message.rawValue, ["peer": line.peer, "reason": line.reason])
        case .summary:
            log.warning(line.message.rawValue, ["count": "\(line.count)", "total": "\(line.total)", "peer": line.peer, "reason": line.reason])
        case .ended:
            log.info(line.message.rawValue, ["total": "\(line.total)", "peer": line.peer, "reason": line.reason])
        }
    }

    func dialFailed(node: String, address: String, reason: String) {
        links.withLock { $0.statistics.dialFailures += 1 }
        log.warning("relay dial failed", ["node": node, "address": address, "reason": reason])
    }

    /// Counts messages dropped before any link took them and tells the content layer, on
    /// `queue` if given (never on the sender's thread, which may hold a panel's queue).
    func dropped(_ count: Int, to node: String, on queue: DispatchQueue?) {
        guard count > 0 else { return }
        links.withLock { $0.statistics.dropped += count }
        let onUndelivered = self.onUndelivered
        (queue ?? DispatchQueue.global()).async { onUndelivered(node, count) }
    }
}
