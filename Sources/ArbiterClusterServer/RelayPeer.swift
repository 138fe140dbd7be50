import ArbiterServer
import ArbiterCluster
import ArbiterIO
import Dispatch

/// The sending side toward one node: the frames queued for it while no link is up, and
/// the one link they go out on, chosen once and kept until it closes, so one node's
/// messages to another keep their order. That link is an inbound link from the node if
/// one is up (a leader answers a follower on the link the follower opened), else one this
/// node dials.
///
/// Once the link is up, `enqueue` appends a frame to its output and writes it from the
/// sending thread when nothing waits ahead of it (`RelayLink.append`); it never waits for
/// the network (the socket is non-blocking, and what it does not take leaves on the relay
/// loop's EPOLLOUT). Before, frames wait here for the link, and a dial runs on `queue`.
final class RelayPeer: @unchecked Sendable {
    let node: String
    /// Dial decisions run here, one at a time.
    let queue: DispatchQueue
    private weak var network: RelayNetwork?

    struct Outbox {
        var address: String
        /// Encoded frames waiting for a link to be up.
        var bytes: [UInt8] = []
        var sizes: [Int] = []
        var link: RelayLink?
        var linkUp = false
        var dialScheduled = false
        /// Past the bound, until the link has closed: new frames are dropped.
        var overflowing = false
        /// The lease epoch of the oldest queued frame that holds only under this node's
        /// lease (0: none), handed to the link with the frames.
        var leaseEpoch: UInt64 = 0
        var backoff: RelayBackoff

        /// Hands what waited to `link`, which is up (under the link's lock, inside this
        /// one's, so a frame sent meanwhile cannot pass them). False if it is closing.
        mutating func handOver(to link: RelayLink) -> Bool {
            let taken = link.withLock { link.append(frames: bytes, sizes: sizes, leaseEpoch: leaseEpoch) }
            guard taken else { return false }
            bytes = []
            sizes = []
            leaseEpoch = 0
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
        case write(RelayLink)
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
            if let link = o.link, o.linkUp {
                switch link.withLock({ link.append(frame: frame, leaseEpoch: leaseEpoch, limit: limit) }) {
                case .write: return .write(link)
                case .queued: return .nothing
                case .overflow:
                    o.overflowing = true
                    return .close(link, dropped: 1)
                case .closed:
                    // Its close is on its way (`linkGone`): the next frame finds a new link.
                    return .dropped(1)
                }
            }
            if o.bytes.count + frame.count > limit {
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
            o.bytes += frame
            o.sizes.append(frame.count)
            if o.leaseEpoch == 0 { o.leaseEpoch = leaseEpoch }
            // A link in its handshake takes them once up (`linkReady`).
            guard o.link == nil, !o.dialScheduled else { return .nothing }
            o.dialScheduled = true
            return .dial
        }
        switch after {
        case .nothing:
            return
        case .write(let link):
            link.writeNow(directly: true)
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
            // One that is closing already is passed over: its `linkGone` has come or will
            // come before this peer knows it.
            if let inbound, o.handOver(to: inbound) {
                o.link = inbound
                o.linkUp = true
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
            link.writeNow(directly: false)
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
            return dialFailed(network: network, address: address, reason: "no relay loop")
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

    /// The dialled link is up: what waited goes into its output, behind the handshake's
    /// last line; the link writes it. On the loop's queue.
    func linkReady(_ link: RelayLink) {
        outbox.withLock { o in
            guard o.link === link, o.handOver(to: link) else { return }
            o.linkUp = true
            o.backoff.succeeded()
        }
    }

    /// `link` closed: if it was this peer's, everything queued and unwritten is dropped
    /// (returned as a count) and the next frame finds a new link. On the loop's queue.
    func linkGone(_ link: RelayLink, unwrittenFrames: Int) -> Int {
        let now = SystemClock.monotonic.milliseconds()
        return outbox.withLock { o in
            guard o.link === link else { return 0 }
            let dropped = o.sizes.count + unwrittenFrames
            o.bytes = []
            o.sizes = []
            o.leaseEpoch = 0
            o.link = nil
            o.linkUp = false
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
