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
    private(set) var runtime: ClusterRuntime!
    /// The runtime's `writableLease`, set with it: `outputStands` reads it at every write.
    private var writableLease: WritableLease?
    /// Set once before the runtime starts.
    private(set) var relay: (any RelaySender)?
    /// The panels by id; emptied when the server stops, as they hold this context too.
    private let hostTable = Locked<[String: ClusterPanel]>([:])
    private var hosts: [String: ClusterPanel] { hostTable.withLock { $0 } }
    let relayedOut = Atomic<Int>(0)
    let relayedIn = Atomic<Int>(0)
    let staleFrames = Atomic<Int>(0)
    /// This node's questions to leaders for `GET /api/panels` (`ClusterContext+PanelState`).
    let stateQueries = RelayQueries<[UInt8]>()
    /// This node's `KICK`s of sessions on other nodes (`ClusterContext+Kick`).
    let kickQueries = RelayQueries<(RelayKickVerdict, String)>()
    /// The server's `KICK` of one of its own sessions for another node's admin: the
    /// session, the key the admin presented, the admin's session. Set once at start.
    private(set) var onKick: (@Sendable (SessionID, String?, SessionID) -> KickOutcome)?
    private var nodeTimer: DispatchSourceTimer?
    /// The relay links up and the registrations seen, to notice a node that is gone.
    let nodeWatch: NodeWatch
    /// The runs of other nodes' processes heard from (`RelayIncarnations`).
    private let incarnations = Locked(RelayIncarnations())
    /// Panels whose fence reservations etcd stops, while it does (`FenceTrouble`).
    private let fenceTroubles: FenceTroubles
    /// This node's lapses (`NodeLapse`): while lapsed, everything a leader sends is dropped
    /// and nothing is relayed until the panels this node follows have resynchronised.
    let lapse: LeaseLapse

    var node: String { setup.node }

    init(setup: ClusterSetup, log: ServerLog, idleSpinNs: Int64 = 0) {
        self.setup = setup
        self.log = log
        self.lapse = LeaseLapse(clock: setup.clock, log: log)
        self.fenceTroubles = FenceTroubles(log: log)
        self.nodeWatch = NodeWatch(node: setup.node)
        defer {
            nodeWatch.gone = { [weak self] node, lease in self?.linkDown(node, lease: lease) }
            lapse.lapsedPanels = { [weak self] in
                guard let self else { return }
                for host in hosts.values { host.queue.async { host.leaseLapsed() } }
            }
            lapse.resyncPanels = { [weak self] done in
                // Every panel resynchronises, before any leader's frame is read again; then
                // frames are read again; then the members join again, so that their answers
                // are not dropped as heard while lapsed.
                guard let self else { return }
                let panels = hosts.values
                let group = DispatchGroup()
                for host in panels { host.queue.async(group: group) { host.leaseRegained() } }
                group.notify(queue: DispatchQueue.global()) {
                    done()
                    for host in panels { host.queue.async { host.rejoinAfterLapse() } }
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
    private(set) var network: RelayNetwork?

    /// How long after a leader's frame was read what it makes may still be written.
    private var staleAfterMs: Int64 { network?.options.staleAfterMs ?? RelayOptions().staleAfterMs }

    /// The reactor's hand-off of a connection that began with `RELAY-`.
    func adoptRelay(fd: Int32, peer: String, firstBytes: [UInt8]) {
        guard let network else {
            Sys.close(fd)
            return
        }
        network.adopt(fd: fd, peer: peer, firstBytes: firstBytes)
    }

    /// Frames to `node` were dropped unsent (its link went down, a dial failed): what this
    /// node's sessions sent a panel it leads may be lost, so those panels re-sync.
    func undelivered(_ count: Int, to node: String) {
        log.warning("relay frames dropped", ["node": node, "count": "\(count)"])
        // After the frames the link still delivered (its own queue) have reached the
        // panels: an answer already on its way is written before the rest is failed.
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(100)) { [weak self] in
            guard let self else { return }
            for host in hosts.values { host.queue.async { host.leaderLinkDown(node) } }
        }
    }

    /// The panels, once made: each gets its `ClusterPanel` as its role (which holds this
    /// context). `kick` is the server's KICK of one of its sessions for another node's admin.
    func attach(_ panels: [PanelHost], kick: @escaping @Sendable (SessionID, String?, SessionID) -> KickOutcome) {
        onKick = kick
        let roles = panels.map { ClusterPanel(host: $0, cluster: self) }
        for role in roles { role.host.adopt(role) }
        hostTable.withLock { $0 = Dictionary(uniqueKeysWithValues: roles.map { ($0.config.id, $0) }) }
    }

    func use(relay: any RelaySender) {
        self.relay = relay
    }

    /// Before listening: publish this node's config or compare it with the cluster's, and
    /// raise the fence keys to what a journal handed out (`ClusterStartup`).
    func prepare(panels: [PanelConfig], journalFences: [String: UInt64]) throws(ClusterStartFailure) {
        try ClusterStartup(setup: setup, log: log).prepare(panels: panels, journalFences: journalFences)
    }

    func start() {
        let runtime = ClusterRuntime(
            name: setup.node, advertise: setup.advertise, panels: hosts.keys.sorted(), control: setup.control, lease: setup.lease,
            watch: setup.watch, timing: setup.timing, keys: setup.keys, stepIntervalMilliseconds: setup.stepIntervalMilliseconds, clock: setup.clock,
            features: setup.features, callbacks: callbacks())
        self.runtime = runtime
        writableLease = runtime.writableLease
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
                self?.onQueue(of: panel) { $0.becameLeader(term: term, fenceFloor: floor, block: block) }
            },
            fencesExtended: { [weak self] panel, block in
                self?.onQueue(of: panel) { $0.fencesExtended(block) }
            },
            stopDeciding: { [weak self] panel, term, reason in
                self?.log.info("stopped deciding", ["panel": panel, "term": "\(term)", "reason": "\(reason)"])
                self?.onQueue(of: panel) { $0.stopDeciding(term: term, reason: reason) }
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

    /// A frame from node `from`, after the link's handshake. `onLinkQueue`: called on a
    /// relay link's own queue (`RelayNetwork`), which may enter a panel's queue and wait
    /// for it; else from any thread (tests' in-process hub, which may be in a panel's
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
            if command.origin == node, !admit(.init(incarnation: command.incarnation, lease: command.lease), of: node) { return }
            guard let host = host(of: command.panel) else { return }
            // The command's arrival, as a reactor stamps a local one: when its bytes were
            // read, not when the panel's queue let it in (a buzzer ranks by it; a busy
            // panel would otherwise rank a relayed press by its wait in the queue).
            let arrived = host.clock.nanoseconds()
            guard onLinkQueue else {
                return host.queue.async { Self.run(host, epoch, heardAt) { $0.relayedCommand(command, arrived: arrived, from: node, flush: &$1) } }
            }
            Self.enter(host, epoch, heardAt) { $0.relayedCommand(command, arrived: arrived, from: node, flush: &$1) }
        case .reply(let panel, _, _, _, _, _), .event(let panel, _, _, _), .typedEvent(let panel, _, _, _), .stateAnswer(let panel, _, _, _),
            .grantEnded(let panel, _, _, _, _, _):
            if heardWhileLapsed() {
                staleFrames.add(1, ordering: .relaxed)
                return
            }
            guard onLinkQueue else {
                return onQueue(of: panel) { Self.run($0, epoch, heardAt) { $0.relayedFromLeader(message, from: node, flush: &$1) } }
            }
            inQueue(of: panel, epoch, heardAt) { $0.relayedFromLeader(message, from: node, flush: &$1) }
        case .sessionGone(let origin, let session, let incarnation, let lease):
            let run = RelayIncarnations.Run(incarnation: incarnation, lease: lease)
            guard origin == node, admit(run, of: node) else { return }
            for host in hosts.values {
                host.queue.async { host.remoteSessionGone(SessionID(Int(clamping: session)), of: origin, run: run) }
            }
        case .ping:
            // Pings stay in the link that heard them.
            break
        case .stateQuery(let panel, let id):
            // Not on the link's queue: reading the state may advance the panel's timers.
            onQueue(of: panel) { $0.stateQueried(id: id, by: node) }
        case .kick(let id, let session, let key, let by):
            kickAsked(id, session: session, key: key, by: by, from: node)
        case .kickAnswer(let id, let session, let verdict, let detail):
            kickAnswered(id, session: session, verdict: verdict, detail: detail, from: node)
        }
    }

    /// Whether a leader's frame arrives while this node's lease has lapsed, or before the
    /// panels it follows have resynchronised since. A node paused (SIGSTOP, a stall) past
    /// its lease wakes with replies and events in its sockets that were sent before its
    /// sessions were declared gone: a `GRANTED` among them would tell a session it holds a
    /// group that another session holds by now (`bench/nemesis.py` saw exactly that). Such
    /// frames are dropped; once the lease is safe again, every panel this node follows
    /// answers its unanswered commands `ERROR unavailable`, tells its members the grants
    /// they knew of ended, and joins them again (`ClusterPanel.leaseLapsed`, `leaseRegained`).
    /// The panels' queues run those before any later frame, which enters the same queues.
    private func heardWhileLapsed() -> Bool { lapse.heard() }

    /// Whether this node's lease lapsed and the panels it follows have not resynchronised
    /// since: it relays nothing meanwhile (`ClusterPanel.relay`), as a node without etcd.
    var isLapsed: Bool { lapse.isLapsed }

    /// `isLapsed`, or a lapse not noticed yet (the lease unsafe, or another one than the
    /// panels synchronised under), which it then begins. Asked before relaying a command:
    /// a node woken from a pause past its lease reads its clients' commands before its
    /// timer notices; relayed, the leader would grant them, then end them when it sees
    /// the node's registration gone, while the client reads its GRANTED
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

    /// The epoch to mark output with that holds only under this node's lease: a leader's
    /// decisions, and what a follower passes on from its leader (`FlushList.outputEpoch`).
    /// 0 while lapsed: what is said then (failover releases, refusals) holds anyway.
    var outputEpoch: UInt64 { lapse.isLapsed ? 0 : lapse.epoch }

    /// Whether output marked with `epoch` may still be written: this node has not lapsed
    /// since, and its lease is still held (`ClusterRuntime.writableLeaseID`: at most half
    /// the safety margin past its safe deadline) and the one its panels synchronised under. A
    /// process paused (SIGSTOP, a VM freeze) between deciding a grant and writing it wakes
    /// with the write still to do; by then another node may lead the panel and have
    /// granted the group again at a higher fence, so the stale GRANTED must not reach the
    /// client (`bench/nemesis.py`, seed 21, saw one). Called at each write, under the
    /// connection's lock: it only reads atomics and the lease's snapshot.
    ///
    /// `markedAtMs` (0: none): when output passed on from a leader's frame was made. Past
    /// `RelayOptions.staleAfterMs` the leader may have closed the link to this node as
    /// silent and ended its sessions' grants, with the lease still fine (a pause shorter
    /// than it): not written either.
    func outputStands(_ epoch: UInt64, markedAtMs: Int64 = 0) -> Bool {
        guard epoch == lapse.epoch, !lapse.isLapsed else { return false }
        if markedAtMs != 0, SystemClock.monotonic.milliseconds() - markedAtMs >= staleAfterMs { return false }
        // Not through `runtime` while the published lease answers (`WritableLease`).
        if let fast = writableLease?.read(), let lease = fast { return lapse.agrees(lease) }
        guard let runtime else { return true }
        return lapse.agrees(runtime.writableLeaseID(), holding: runtime.leaseID)
    }

    /// From the node timer: a lease that lapsed while no leader's frame came is noticed
    /// too, within about half a second (`NodeLapse.check`).
    func checkLease() { lapse.check() }

    /// Whether a frame of `run` from `node` may go on to the panels. A new run of the node
    /// (a restarted process, or one come back under a new lease after a lapse) ends every
    /// session of the old one (`reason=disconnect`, as a dead node's) on every panel,
    /// handed to each panel's queue before this frame can be: the queues run in order, so
    /// the new run's sessions, which may reuse the old numbers, start clean. A retired
    /// run's frame is dropped.
    private func admit(_ run: RelayIncarnations.Run, of node: String) -> Bool {
        let verdict = incarnations.withLock { table -> RelayIncarnations.Verdict in
            let verdict = table.admit(run, of: node)
            // Under the lock: a frame of the new run on another link cannot overtake it.
            if case .replaced = verdict {
                for host in hosts.values { host.queue.async { host.remoteNodeGone(node) } }
            }
            return verdict
        }
        switch verdict {
        case .first, .current:
            return true
        case .replaced(let previous):
            log.info(
                "node restarted or lapsed: its old sessions end",
                ["node": node, "old": "\(previous.incarnation)/\(previous.lease)", "new": "\(run.incarnation)/\(run.lease)"])
            return true
        case .retired:
            staleFrames.add(1, ordering: .relaxed)
            return false
        }
    }

    /// Whether `run` of `node` was replaced by a newer run (its frames are dropped).
    func isRetired(_ run: RelayIncarnations.Run, of node: String) -> Bool {
        incarnations.withLock { $0.isRetired(run, of: node) }
    }

    /// No link to `node` is left, or its registration under `lease` vanished: its
    /// sessions' grants end for every panel led here (with the registration, its members
    /// leave too; with only the link, they are kept for the node to join them again:
    /// `ClusterPanel.remoteLinkLost`), and panels it leads re-sync their members. A
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
                if let lease, !self.incarnations.withLock({ $0.isCurrent(lease: lease, of: node) }) {
                    self.log.info("an earlier registration of a node ended: its new run's sessions stay", ["node": node, "panel": host.config.id])
                } else if lease == nil {
                    host.remoteLinkLost(node)
                } else {
                    host.remoteNodeGone(node)
                }
                host.leaderLinkDown(node)
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

    /// Every live node, sorted by name (GET /api/nodes).
    func nodes() -> [(node: String, address: String)] {
        var addresses = runtime?.nodeAddresses() ?? [:]
        addresses[setup.node] = setup.advertise
        return addresses.map { ($0.key, $0.value) }.sorted { $0.node < $1.node }
    }

    /// Notices registrations that vanished since the last call: their sessions are gone.
    func checkNodes() {
        guard let runtime else { return }
        let registrations = runtime.nodeRegistrations()
        nodeWatch.registrationsSeen(registrations)
        checkLease()
        let typed = Set(registrations.keys.filter { runtime.node($0, supports: ClusterFeatures.typedEvents) })
        for host in hosts.values {
            host.queue.async {
                host.clusterState.typedEventNodes = typed
                host.checkAnswers()
                host.checkKeptMembers()
                host.forgetGone()
            }
        }
    }

    /// Panels this node decides now (for /metrics).
    func ledPanels() -> Int {
        guard let runtime else { return 0 }
        return hosts.keys.filter { runtime.canDecide($0) != nil }.count
    }
}
