import ArbiterServer
import ArbiterCluster
import ArbiterClusterRuntime
import ArbiterCore
import ArbiterIO
import Dispatch
import Glibc
import Synchronization

/// Cluster mode's glue between the server and `ClusterRuntime`: the start-up checks, the
/// runtime's callbacks routed to each panel's queue, and the relay links' messages routed
/// to the panel they are about. Exists only with `--cluster`; without it nothing here is
/// made and no panel looks at it.
final class ClusterContext: @unchecked Sendable {
    let setup: ClusterSetup
    let log: ServerLog
    // Unchecked, as the relay network below: set once at start, then read on every
    // relayed command.
    @exclusivity(unchecked) private(set) var runtime: ClusterRuntime!
    /// Set once before the runtime starts.
    @exclusivity(unchecked) private(set) var relay: (any RelaySender)?
    /// The panels by id; emptied when the server stops, as they hold this context too.
    let hostTable = Locked<[String: ClusterPanel]>([:])
    var hosts: [String: ClusterPanel] { hostTable.withLock { $0 } }
    let relayedOut = Atomic<Int>(0)
    let relayedIn = Atomic<Int>(0)
    let staleFrames = Atomic<Int>(0)
    /// This node's questions to leaders for `GET /api/panels` (`ClusterContext+Server`).
    let stateQueries = RelayQueries<[UInt8]>()
    /// This node's `KICK`s of sessions on other nodes (`ClusterKicks`).
    let kickQueries = RelayQueries<(RelayKickVerdict, String)>()
    /// The server's `KICK` of one of its own sessions for another node's admin: the
    /// session, the key the admin presented, the admin's session. Set once at start.
    var onKick: (@Sendable (SessionID, String?, SessionID) -> KickOutcome)?
    private var nodeTimer: DispatchSourceTimer?
    /// The relay links up and the registrations seen, to notice a node that is gone.
    let nodeWatch: NodeWatch
    /// The runs of other nodes' processes heard from.
    private let runs: NodeRuns
    /// Panels whose fence reservations etcd stops, while it does (`FenceTrouble`).
    private let fenceTroubles: FenceTroubles
    /// This node's lapses (`NodeLapse`): while lapsed, everything a leader sends is dropped
    /// and nothing is relayed until the panels this node follows have resynchronised.
    let lapse: LeaseLapse
    /// Hooked panels' pending deliveries, in etcd.
    let hookStore: ClusterHookStore

    var node: String { setup.node }

    /// `KICK` of sessions on other nodes, for them and for this node's own.
    var kicks: ClusterKicks { ClusterKicks(context: self) }

    init(setup: ClusterSetup, log: ServerLog, idleSpinNs: Int64 = 0) {
        self.setup = setup
        self.log = log
        self.lapse = LeaseLapse(clock: setup.clock, log: log, staleAfterMs: RelayOptions().staleAfterMs)
        self.fenceTroubles = FenceTroubles(log: log)
        self.nodeWatch = NodeWatch(node: setup.node)
        self.runs = NodeRuns(log: log)
        self.hookStore = ClusterHookStore(etcd: setup.hooks ?? setup.control, keys: setup.keys, log: log)
        defer {
            nodeWatch.gone = { [weak self] node, lease in self?.linkDown(node, lease: lease) }
            runs.replaced = { [weak self] node in
                guard let self else { return }
                for host in hosts.values { host.queue.async { host.duties.remoteNodeGone(node) } }
            }
            lapse.lapsedPanels = { [weak self] in
                guard let self else { return }
                for host in hosts.values { host.queue.async { host.failover.leaseLapsed() } }
            }
            lapse.resyncPanels = { [weak self] done in
                // Every panel resynchronises, before any leader's frame is read again; then
                // frames are read again; then the members join again, so that their answers
                // are not dropped as heard while lapsed.
                guard let self else { return }
                let panels = hosts.values
                let group = DispatchGroup()
                for host in panels { host.queue.async(group: group) { host.failover.leaseRegained() } }
                group.notify(queue: ClusterTimers.queue) {
                    done()
                    for host in panels { host.queue.async { host.failover.rejoinAfterLapse() } }
                }
            }
        }
        self.relay = setup.relay
        guard setup.relay == nil else { return }
        var options = RelayOptions()
        options.idleSpinNs = idleSpinNs
        let network = RelayNetwork(
            node: setup.node, key: setup.key, log: log, options: options,
            onMessage: { [weak self] from, message in self?.receive(message, from: from, onLinkQueue: true) },
            onLinkUp: { [weak self] node in self?.nodeWatch.linkUp(node) },
            onLinkDown: { [weak self] node in self?.nodeWatch.linkDown(node) },
            onUndelivered: { [weak self] node, count in self?.undelivered(count, to: node) },
            outputStands: { [weak self] epoch in self?.outputStands(epoch) ?? true })
        self.network = network
        self.relay = network
    }

    /// The relay transport on sockets; nil when a test put its own relay in the setup.
    @exclusivity(unchecked) private(set) var network: RelayNetwork?

    /// Frames to `node` were dropped unsent (its link went down, a dial failed): what this
    /// node's sessions sent a panel it leads may be lost, so those panels re-sync.
    func undelivered(_ count: Int, to node: String) {
        log.warning("relay frames dropped", ["node": node, "count": "\(count)"])
        // After the frames the link still delivered (the relay loop's queue) have reached the
        // panels: an answer already on its way is written before the rest is failed.
        ClusterTimers.queue.asyncAfter(deadline: .now() + .milliseconds(100)) { [weak self] in
            guard let self else { return }
            for host in hosts.values { host.queue.async { host.failover.leaderLinkDown(node) } }
        }
    }

    func use(relay: any RelaySender) {
        self.relay = relay
    }

    func start() {
        let runtime = ClusterRuntime(
            name: setup.node, advertise: setup.advertise, panels: hosts.keys.sorted(), control: setup.control, lease: setup.lease,
            watch: setup.watch, timing: setup.timing, keys: setup.keys, stepIntervalMilliseconds: setup.stepIntervalMilliseconds, clock: setup.clock,
            features: setup.features, callbacks: callbacks())
        self.runtime = runtime
        lapse.watch(runtime)
        runtime.start()
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "arbiter.cluster.nodes"))
        timer.schedule(deadline: .now() + .milliseconds(500), repeating: .milliseconds(500))
        timer.setEventHandler { [weak self] in self?.checkNodes() }
        timer.resume()
        nodeTimer = timer
    }

    /// With `resign`, every panel is handed over at once (SIGTERM); without, the node
    /// goes quiet as a crashed one would.
    func stop(resign: Bool) {
        nodeTimer?.cancel()
        nodeTimer = nil
        runtime?.stop(resign: resign)
    }

    /// Closes the relay links, after the panels stopped, and lets the panels go (each
    /// holds this context: without this the two would keep each other alive).
    func stopRelay() {
        network?.stop()
        let panels = hostTable.withLock { table in
            defer { table = [:] }
            return table.values
        }
        // Each host holds its role and the role its host: let go on the panel's queue, where
        // the role is read (the reactors have stopped).
        for panel in panels { panel.queue.async { panel.host.dropRole() } }
    }

    private func callbacks() -> ClusterRuntimeCallbacks {
        ClusterRuntimeCallbacks(
            becameLeader: { [weak self] panel, term, floor, block in
                self?.log.info("leading", ["panel": panel, "term": "\(term)", "fences": "\(block.first)-\(block.last)"])
                self?.onQueue(of: panel) { $0.leadership.becameLeader(term: term, fenceFloor: floor, block: block) }
            },
            fencesExtended: { [weak self] panel, block in
                self?.onQueue(of: panel) { $0.leadership.fencesExtended(block) }
            },
            stopDeciding: { [weak self] panel, term, reason in
                self?.log.info("stopped deciding", ["panel": panel, "term": "\(term)", "reason": "\(reason)"])
                self?.onQueue(of: panel) { $0.leadership.stopDeciding(term: term, reason: reason) }
            },
            leaderChanged: { [weak self] panel, node, address, term in
                self?.log.info("leader changed", ["panel": panel, "node": node ?? "-", "address": address ?? "-", "term": term.map { "\($0)" } ?? "-"])
                self?.onQueue(of: panel) { $0.leaderChanged(node: node, address: address, term: term) }
            },
            fenceReservation: { [weak self] panel, failure in self?.fenceReservation(panel, failure: failure) })
    }

    /// One fence reservation's outcome (`FenceTroubles`).
    func fenceReservation(_ panel: String, failure: EtcdError?) { fenceTroubles.note(panel, failure: failure) }

    /// What etcd said when it last stopped `panel`'s fence reservation, while it goes on.
    func fenceTrouble(of panel: String) -> String? { fenceTroubles.problem(of: panel) }

    /// How many panels' fence reservations etcd stops now (`/metrics`).
    func fenceTroubleCount() -> Int { fenceTroubles.count }

    private func host(of panel: String) -> ClusterPanel? { hostTable.withLock { $0[panel] } }

    private func onQueue(of panel: String, _ body: @escaping @Sendable (ClusterPanel) -> Void) {
        guard let host = host(of: panel) else { return }
        host.queue.async { body(host) }
    }

    /// Runs `body` in the panel's queue before returning, on the calling thread when the
    /// queue is free: a relay link's frames go in the way a reactor's commands do, with no
    /// thread woken for them, and what they make is written after the queue is left (a
    /// client that answers a reply at once finds the queue free). Only from a relay
    /// link's queue, which no panel queue ever waits for, so it cannot close a cycle.
    /// `body` does not escape: an escaping one (its context allocated, the message copied
    /// into it) cost hundreds of instructions on every relayed press.
    private func inQueue(of panel: String, _ epoch: UInt64, _ heardAt: Int64, _ body: (ClusterPanel, inout FlushList) -> Void) {
        guard let host = host(of: panel) else { return }
        Self.enter(host, epoch, heardAt, body)
    }

    /// `inQueue` for a panel already looked up.
    private static func enter(_ host: ClusterPanel, _ epoch: UInt64, _ heardAt: Int64, _ body: (ClusterPanel, inout FlushList) -> Void) {
        var flush = flushList(epoch, heardAt)
        host.queue.sync { body(host, &flush) }
        flush.flushAll()
    }

    /// What a leader's or follower's frame makes is written under the lease epoch read when
    /// the frame arrived, and within `RelayOptions.staleAfterMs` of `heardAt`.
    private static func flushList(_ epoch: UInt64, _ heardAt: Int64) -> FlushList {
        var flush = FlushList()
        flush.outputEpoch = epoch
        flush.outputStampMs = heardAt
        return flush
    }

    /// A frame's work handed to its panel's queue (frames not read on a link's queue).
    private static func run(_ host: ClusterPanel, _ epoch: UInt64, _ heardAt: Int64, _ body: (ClusterPanel, inout FlushList) -> Void) {
        var flush = flushList(epoch, heardAt)
        body(host, &flush)
        flush.flushAll()
    }

    // MARK: Relay

    /// A frame from node `from`, after the link's handshake. `onLinkQueue`: called on the
    /// relay loop's queue (`RelayNetwork`), which may enter a panel's queue and wait for
    /// it, as a reactor does; else from any thread (tests' in-process hub, which may be in a panel's
    /// queue), and the work is handed to the panel's queue.
    func receive(_ message: RelayMessage, from node: String, onLinkQueue: Bool = false) {
        // Read before the lapse check: a lapse that begins after it makes what this frame
        // brings stale at the write (`outputStands`), not current.
        let epoch = outputEpoch
        // When the frame was read, near enough: what it makes must be written within
        // `RelayOptions.staleAfterMs` of it.
        let heardAt = SystemClock.monotonic.milliseconds()
        switch message {
        case .command(let command):
            relayedIn.add(1, ordering: .relaxed)
            // A command naming another origin is refused by the panel; it says nothing of runs.
            // Counted before admitting: the panel's check for a run retired since is then an atomic read.
            let admitted = command.origin == node ? runs.replacementCount : nil
            if admitted != nil, !admit(.init(incarnation: command.incarnation, lease: command.lease), of: node) { return }
            guard let host = host(of: command.panel) else { return }
            // The command's arrival, as a reactor stamps a local one: when its bytes were
            // read, not when the panel's queue let it in (a buzzer ranks by it; a busy
            // panel would otherwise rank a relayed press by its wait in the queue).
            let arrived = host.clock.nanoseconds()
            guard onLinkQueue else {
                return host.queue.async {
                    Self.run(host, epoch, heardAt) { $0.duties.relayedCommand(command, arrived: arrived, from: node, admitted: admitted, flush: &$1) }
                }
            }
            Self.enter(host, epoch, heardAt) { $0.duties.relayedCommand(command, arrived: arrived, from: node, admitted: admitted, flush: &$1) }
        case .reply(let panel, _, _, _, _, _), .event(let panel, _, _, _), .typedEvent(let panel, _, _, _), .stateAnswer(let panel, _, _, _),
            .grantEnded(let panel, _, _, _, _, _):
            if heardWhileLapsed() {
                staleFrames.add(1, ordering: .relaxed)
                return
            }
            guard onLinkQueue else {
                return onQueue(of: panel) { Self.run($0, epoch, heardAt) { $0.follower.relayedFromLeader(message, from: node, flush: &$1) } }
            }
            inQueue(of: panel, epoch, heardAt) { $0.follower.relayedFromLeader(message, from: node, flush: &$1) }
        case .sessionGone(let origin, let session, let incarnation, let lease):
            let run = RelayIncarnations.Run(incarnation: incarnation, lease: lease)
            guard origin == node, admit(run, of: node) else { return }
            for host in hosts.values {
                host.queue.async { host.duties.remoteSessionGone(SessionID(Int(clamping: session)), of: origin, run: run) }
            }
        case .ping:
            // Pings stay in the link that heard them.
            break
        case .stateQuery(let panel, let id):
            // Not on the link's queue: reading the state may advance the panel's timers.
            onQueue(of: panel) { $0.duties.stateQueried(id: id, by: node) }
        case .kick(let id, let session, let key, let by):
            kicks.kickAsked(id, session: session, key: key, by: by, from: node)
        case .kickAnswer(let id, let session, let verdict, let detail):
            kicks.kickAnswered(id, session: session, verdict: verdict, detail: detail, from: node)
        }
    }

    /// Whether a leader's frame arrives while this node's lease has lapsed, or before the
    /// panels it follows have resynchronised since (`LeaseLapse.heard`): it is dropped.
    private func heardWhileLapsed() -> Bool { lapse.heard() }

    /// Whether this node's lease lapsed and the panels it follows have not resynchronised
    /// since: it relays nothing meanwhile (`FollowerRelay.relay`), as a node without etcd.
    var isLapsed: Bool { lapse.isLapsed }

    /// `isLapsed`, or a lapse not noticed yet, which it then begins. Asked before relaying
    /// a command: a node woken from a pause past its lease reads its clients' commands
    /// before its timer notices; relayed, the leader would grant them, then end them when
    /// it sees the node's registration gone, while the client reads its GRANTED
    /// (`bench/nemesis.py --faults pause-edge`, seed 26).
    func mayNotRelay() -> Bool { heardWhileLapsed() }

    /// Stops the node timer (`checkLease`, vanished nodes): tests that need the moment
    /// before it notices a lapse.
    func stopNodeTimerForTesting() {
        nodeTimer?.cancel()
        nodeTimer = nil
    }

    /// The lease the panels this node follows last synchronised under (0: none yet).
    var synchronisedLease: Int64 { lapse.syncedLease }

    /// The epoch to mark output with that holds only under this node's lease
    /// (`LeaseLapse.outputEpoch`).
    var outputEpoch: UInt64 { lapse.outputEpoch }

    /// Whether output marked with `epoch` may still be written (`LeaseLapse.outputStands`).
    func outputStands(_ epoch: UInt64, markedAtMs: Int64 = 0) -> Bool { lapse.outputStands(epoch, markedAtMs: markedAtMs) }

    /// From the node timer: a lease that lapsed while no leader's frame came is noticed
    /// too, within about half a second (`NodeLapse.check`).
    func checkLease() { lapse.check() }

    /// Whether a frame of `run` from `node` may go on to the panels (`NodeRuns.admit`); a
    /// retired run's frame is dropped and counted.
    private func admit(_ run: RelayIncarnations.Run, of node: String) -> Bool {
        if runs.admit(run, of: node) { return true }
        staleFrames.add(1, ordering: .relaxed)
        return false
    }

    /// Whether `run` of `node` was replaced by a newer run (its frames are dropped).
    func isRetired(_ run: RelayIncarnations.Run, of node: String, admitted: UInt64? = nil) -> Bool { runs.isRetired(run, of: node, admitted: admitted) }

    /// No link to `node` is left, or its registration under `lease` vanished: its
    /// sessions' grants end for every panel led here (with the registration, its members
    /// leave too; with only the link, they are kept for the node to join them again:
    /// `LeaderDuties.remoteLinkLost`), and panels it leads re-sync their members. A
    /// registration's end ends nothing that a newer run of the node (come back under
    /// another lease, its old sessions ended when its first frame came) holds: asked
    /// again in each panel's queue, behind any such frame already admitted.
    func linkDown(_ node: String, lease: Int64? = nil) {
        if let lease {
            log.info("a node's registration ended", ["node": node, "lease": "\(lease)"])
        } else {
            log.info("relay link down", ["node": node])
        }
        for host in hosts.values {
            host.queue.async {
                if let lease, !self.runs.isCurrent(lease: lease, of: node) {
                    self.log.info("an earlier registration of a node ended: its new run's sessions stay", ["node": node, "panel": host.config.id])
                } else if lease == nil {
                    host.duties.remoteLinkLost(node)
                } else {
                    host.duties.remoteNodeGone(node)
                }
                host.failover.leaderLinkDown(node)
            }
        }
    }

    /// Whether `send` can send at all (a node without a relay network cannot).
    var canRelay: Bool { relay != nil }

    /// Sends to `node` at its advertised address. A node that sent us a command may not
    /// be in the runtime's list yet (it is read every step): its own link then carries the
    /// answer, so an unknown address is passed empty rather than the answer dropped.
    @discardableResult
    func send(_ message: RelayMessage, toNode node: String, address: String? = nil, leaseEpoch: UInt64 = 0) -> Bool {
        send(encoded: RelayFrameEncoder.encode(message), toNode: node, address: address, leaseEpoch: leaseEpoch)
    }

    /// The same, for a frame already encoded (`RelayFrameEncoder`).
    @discardableResult
    func send(encoded frame: [UInt8], toNode node: String, address: String? = nil, leaseEpoch: UInt64 = 0) -> Bool {
        guard let relay else { return false }
        relay.send(encoded: frame, toNode: node, address: address ?? runtime?.address(ofNode: node) ?? "", leaseEpoch: leaseEpoch)
        return true
    }

    /// Where `node` is dialled, once this node has read its registration.
    func address(ofNode node: String) -> String? { runtime?.address(ofNode: node) }

    /// Whether a frame for `node` leaves without dialling it: a link to it is up.
    func hasLinkUp(to node: String) -> Bool { relay?.hasLinkUp(to: node) ?? false }
}
