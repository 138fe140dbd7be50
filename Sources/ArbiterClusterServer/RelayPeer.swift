import ArbiterServer
import ArbiterCluster
import ArbiterIO
import Dispatch

/// The sending side toward one node: the frames queued for it and the one link they go
/// out on, chosen once and kept until it closes, so one node's messages to another keep
/// their order. That link is an inbound link from the node if one is up (a leader answers
/// a follower on the link the follower opened), else one this node dials.
///
/// `send` writes a frame straight to the link's socket when nothing waits ahead of it, else
/// appends under the lock and, when needed, wakes the relay loop (to write) or `queue`
/// (to dial): it never waits for the network (the socket is non-blocking; what it does
/// not take at once is queued for the loop, which writes it on EPOLLOUT).
final class RelayPeer: @unchecked Sendable {
    let node: String
    /// Dial decisions run here, one at a time.
    let queue: DispatchQueue
    private weak var network: RelayNetwork?

    struct Outbox {
        var address: String
        /// Encoded frames not yet taken by the link.
        var bytes: [UInt8] = []
        var sizes: [Int] = []
        /// Bytes the link took but has not written yet.
        var unwritten = 0
        var link: RelayLink?
        var linkUp = false
        var pullScheduled = false
        var dialScheduled = false
        /// Past the bound, until the link has closed: new frames are dropped.
        var overflowing = false
        /// The lease epoch of the oldest queued frame that holds only under this node's
        /// lease (0: none), handed to the link with the frames (`take`).
        var leaseEpoch: UInt64 = 0
        var backoff: RelayBackoff

        /// Nothing waits to be written on `link`: neither here nor in the link itself.
        func isIdle(_ link: RelayLink) -> Bool {
            self.link === link && linkUp && !pullScheduled && bytes.isEmpty && unwritten == 0
        }

        /// Writes `frame` to the idle `link` from this thread, under the outbox's lock (which
        /// keeps the link's own writes out); what the socket does not take is queued for the
        /// relay loop. True if the link must be woken to pull the rest.
        mutating func writeDirectly(_ frame: [UInt8], on link: RelayLink) -> Bool {
            let written = link.writeDirectly(frame)
            guard written < frame.count else { return false }
            bytes += frame[written...]
            sizes.append(frame.count - written)
            pullScheduled = true
            return true
        }
    }

    let outbox: Locked<Outbox>

    init(node: String, address: String, network: RelayNetwork) {
        self.node = node
        self.network = network
        self.queue = DispatchQueue(label: "arbiter.relay.peer.\(node)")
        self.outbox = Locked(Outbox(address: address, backoff: RelayBackoff(first: network.options.firstRetryMs, max: network.options.maxRetryMs)))
    }

    private enum After {
        case nothing
        case wrote
        case pull(RelayLink)
        case dial
        case close(RelayLink, dropped: Int)
        case stale(RelayLink?)
        case dropped(Int)
    }

    /// Queues one encoded frame. From any thread. `leaseEpoch` (0: none): the frame holds
    /// only under this node's lease; one whose lease lapsed since is not written, and the
    /// link it would have gone on closes, so the node at the other end resynchronises.
    func enqueue(_ frame: [UInt8], address: String, limit: Int, leaseEpoch: UInt64 = 0) {
        let stands = network?.outputStands
        let after = outbox.withLock { o -> After in
            o.address = address
            if o.overflowing { return .dropped(1) }
            if leaseEpoch != 0, let stands, !stands(leaseEpoch) { return .stale(o.link) }
            if o.bytes.count + o.unwritten + frame.count > limit {
                if let link = o.link {
                    o.overflowing = true
                    return .close(link, dropped: 1)
                }
                let dropped = o.sizes.count + 1
                o.bytes = []
                o.sizes = []
                o.leaseEpoch = 0
                return .dropped(dropped)
            }
            if let link = o.link, o.isIdle(link) {
                // Nothing is ahead of this frame: written from this thread, it saves waking
                // the relay loop (a wake-up costs tens of us, a relayed press crosses four).
                guard o.writeDirectly(frame, on: link) else { return .wrote }
                if o.leaseEpoch == 0 { o.leaseEpoch = leaseEpoch }
                return .pull(link)
            }
            o.bytes += frame
            o.sizes.append(frame.count)
            if o.leaseEpoch == 0 { o.leaseEpoch = leaseEpoch }
            if let link = o.link {
                guard o.linkUp, !o.pullScheduled else { return .nothing }
                o.pullScheduled = true
                return .pull(link)
            }
            guard !o.dialScheduled else { return .nothing }
            o.dialScheduled = true
            return .dial
        }
        switch after {
        case .nothing:
            return
        case .wrote:
            network?.wrote(frames: 1, directly: true)
        case .pull(let link):
            link.loop.queue.async { link.pull() }
        case .dial:
            queue.async { self.dialIfNeeded() }
        case .close(let link, let dropped):
            network?.dropped(dropped, to: node, on: queue)
            link.loop.queue.async { link.close(because: .overflow(limit: limit)) }
        case .stale(let link):
            network?.dropped(1, to: node, on: queue)
            if let link { link.loop.queue.async { link.close(because: .staleOutput) } }
        case .dropped(let count):
            network?.dropped(count, to: node, on: queue)
        }
    }

    /// A ping for `link` when it is quiet: written at once if nothing is queued or
    /// unwritten for it (a link with frames on their way needs no ping: those are heard).
    /// Never dials, never counted as a frame. False if `link` is not the one this peer
    /// writes to: then nothing else writes to it and the link sends its ping itself. On
    /// the relay loop's queue.
    func ping(on link: RelayLink) -> Bool {
        let frame = RelayLink.pingFrame
        var mine = true
        let pull = outbox.withLock { o -> Bool in
            guard o.link === link, o.linkUp else {
                mine = false
                return false
            }
            guard !o.overflowing, o.isIdle(link) else { return false }
            // If the socket is full (its reader is slow), the rest goes out like a frame.
            return o.writeDirectly(frame, on: link)
        }
        if pull { link.pull() }
        return mine
    }

    /// Finds the link for what is queued: an inbound one from the node if up, else a dial
    /// once the backoff allows. On `queue`.
    func dialIfNeeded() {
        guard let network else { return }
        enum Step {
            case none
            case inbound(RelayLink)
            case wait(Int64)
            case connect(String)
        }
        let inbound = network.upInbound(from: node)
        let now = SystemClock.monotonic.milliseconds()
        let step = outbox.withLock { o -> Step in
            guard o.link == nil, !o.sizes.isEmpty, !network.isStopped else {
                o.dialScheduled = false
                return .none
            }
            if let inbound {
                o.link = inbound
                o.linkUp = true
                o.pullScheduled = true
                o.dialScheduled = false
                return .inbound(inbound)
            }
            let wait = o.backoff.wait(at: now)
            if wait > 0 { return .wait(wait) }
            return .connect(o.address)
        }
        switch step {
        case .none:
            return
        case .inbound(let link):
            link.loop.queue.async { link.attach(self) }
        case .wait(let ms):
            queue.asyncAfter(deadline: .now() + .milliseconds(Int(ms))) { self.dialIfNeeded() }
        case .connect(let address):
            connect(to: address, network: network)
        }
    }

    private func connect(to address: String, network: RelayNetwork) {
        guard let parsed = RelayAddress(address) else {
            return dialFailed(network: network, address: address, reason: "not a host:port address")
        }
        guard let loop = network.loop else {
            return dialFailed(network: network, address: address, reason: RelayNetwork.noLoopRefusal)
        }
        switch Sys.connect(host: parsed.host, port: parsed.port) {
        case .failure(let failure):
            dialFailed(network: network, address: address, reason: failure.description)
        case .success(let fd):
            let link = RelayLink(network: network, loop: loop, fd: fd, address: address, dialingNode: node, sending: self)
            outbox.withLock { o in
                o.link = link
                o.linkUp = false
                o.dialScheduled = false
            }
            network.started(link)
        }
    }

    /// A dial that failed before it had a socket: what was queued is dropped. On `queue`.
    private func dialFailed(network: RelayNetwork, address: String, reason: String) {
        let now = SystemClock.monotonic.milliseconds()
        let dropped = outbox.withLock { o -> Int in
            defer {
                o.bytes = []
                o.sizes = []
                o.leaseEpoch = 0
                o.dialScheduled = false
                o.backoff.failed(at: now)
            }
            return o.sizes.count
        }
        network.dialFailed(node: node, address: address, reason: reason)
        network.dropped(dropped, to: node, on: nil)
    }

    /// The link is up: it may take what is queued. `holding` is what it still has to
    /// write of its handshake, which a frame written directly must not pass. On the
    /// relay loop's queue.
    func linkReady(_ link: RelayLink, holding: Int) {
        outbox.withLock { o in
            guard o.link === link else { return }
            o.linkUp = true
            o.unwritten = holding
            o.pullScheduled = true
            o.backoff.succeeded()
        }
    }

    /// Everything queued, for `link` to write; nil if the link is no longer this peer's.
    /// On the relay loop's queue.
    func take(for link: RelayLink) -> (bytes: [UInt8], sizes: [Int], leaseEpoch: UInt64)? {
        outbox.withLock { o in
            guard o.link === link else { return nil }
            o.pullScheduled = false
            defer {
                o.unwritten += o.bytes.count
                o.bytes = []
                o.sizes = []
                o.leaseEpoch = 0
            }
            return (o.bytes, o.sizes, o.leaseEpoch)
        }
    }

    /// What `link` still holds unwritten, for the bound. On the relay loop's queue.
    func holds(_ unwritten: Int, on link: RelayLink) {
        outbox.withLock { o in
            if o.link === link { o.unwritten = unwritten }
        }
    }

    /// `link` closed: if it was this peer's, everything queued and unwritten is dropped
    /// (returned as a count) and the next frame finds a new link. On the relay loop's queue.
    func linkGone(_ link: RelayLink, unwrittenFrames: Int) -> Int {
        let now = SystemClock.monotonic.milliseconds()
        return outbox.withLock { o in
            guard o.link === link else { return 0 }
            let dropped = o.sizes.count + unwrittenFrames
            o.bytes = []
            o.sizes = []
            o.leaseEpoch = 0
            o.unwritten = 0
            o.link = nil
            o.linkUp = false
            o.pullScheduled = false
            o.dialScheduled = false
            o.overflowing = false
            o.backoff.failed(at: now)
            return dropped
        }
    }

    /// `stop`: drops what is queued. Returns how many frames.
    func dropAll() -> Int {
        outbox.withLock { o in
            defer {
                o.bytes = []
                o.sizes = []
                o.leaseEpoch = 0
            }
            return o.sizes.count
        }
    }
}
