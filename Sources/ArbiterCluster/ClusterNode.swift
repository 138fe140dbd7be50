import ArbiterCore

/// Runs one node's lease and every panel's leadership machine against an `EtcdAPI`,
/// synchronously, one `step()` at a time. The clock is handed in, so the same driver runs
/// under a manual clock in unit tests and under the monotonic clock for real.
///
/// A step, in order: the deadline check of every panel (a node waking from a pause steps
/// down before anything else), the lease's grant or keepalive, a read of the election keys
/// and the live nodes, then campaigning below the spreading quota or shedding above it.
public final class ClusterNode {
    public let name: String
    public let advertise: String
    public let keys: ClusterKeys
    public let timing: ClusterTiming
    public private(set) var lease: NodeLeaseStateMachine
    public private(set) var machines: [String: PanelLeadershipStateMachine]
    public private(set) var liveNodes = 1
    public private(set) var lastError: EtcdError?
    /// Every live node's registration, as last read from `/arbiter/nodes/`.
    public private(set) var registrations: [String: NodeRegistration] = [:]
    /// Every live node's advertised address.
    public var nodeAddresses: [String: String] { registrations.mapValues(\.address) }
    /// Set by a driver that keeps the lease elsewhere (`ClusterRuntime` renews it on its own
    /// thread, so a slow range or txn never delays a keepalive): `step()` then leaves the
    /// lease alone and the driver hands every change in with `adoptLease`.
    public var leaseIsExternal = false
    /// With `leaseIsExternal`: the lease as the driver holds it at this instant, and since
    /// when it has been safe without a break (nil: not known). Read before every event a
    /// panel's machine gets: a step held up in a slow etcd call (a member that froze keeps
    /// a call 2 s) would otherwise judge the deadline by the lease it was handed before the
    /// call, while the renewals that came meanwhile wait behind the step in the driver's
    /// `adoptLease`, and its leaders would step down on a healthy lease.
    public var externalLease: (() -> (lease: NodeLeaseStateMachine, safeSince: Instant?))?
    /// Within `adoptLease`, whose own events must not pull the lease again.
    private var adopting = false
    /// After this node's own lease ended, no campaign before this instant: TTL minus the
    /// margin after it heard. etcd 3.4's leader, frozen and woken, revokes at one instant
    /// every lease it saw no keepalive for, long before their TTL (etcd issue 15247,
    /// docs/CLUSTER.md); the old leader of a panel may then still decide until its own safe
    /// deadline, which is at most TTL minus the margin after that instant, and this node
    /// heard of its own lease's end at that instant or later.
    public private(set) var campaignsFrom: Instant?
    /// Every action the machines produced, in order, for the server (and tests) to follow.
    public var onAction: ((String, PanelLeadershipAction) -> Void)?
    /// Each fence reservation's outcome that is etcd's: the error that stopped it (etcd
    /// refusing writes, out of space, an answer not understood), or nil when one went
    /// through. Not a reservation lost to a newer term: that is a step-down, not trouble.
    public var onFenceReservation: ((_ panel: String, _ failure: EtcdError?) -> Void)?
    public var fenceBlockSize = FenceBlock.size
    /// What this node announces (`ClusterFeatures`); tests play an older node with none.
    public var features = ClusterFeatures.all

    private let panelNames: [String]
    private let etcd: any EtcdAPI
    /// Within `shutdown`: whether an etcd call failed, so the others are skipped.
    private var shuttingDown = false
    private var shutdownCallsFailed = false
    private let clock: () -> Instant

    public init(
        name: String, advertise: String, panels: [String], etcd: any EtcdAPI, timing: ClusterTiming = .standard, keys: ClusterKeys = ClusterKeys(),
        clock: @escaping () -> Instant
    ) {
        self.name = name
        self.advertise = advertise
        self.keys = keys
        self.timing = timing
        self.etcd = etcd
        self.clock = clock
        self.panelNames = panels.sorted()
        self.lease = NodeLeaseStateMachine(timing: timing)
        var machines: [String: PanelLeadershipStateMachine] = [:]
        for panel in panels { machines[panel] = PanelLeadershipStateMachine(panel: panel, node: name) }
        self.machines = machines
    }

    /// The fence block to decide `panel` with now, or nil: then the panel is not ours to decide.
    public func canDecide(_ panel: String) -> FenceBlock? {
        machines[panel]?.canDecide(now: clock())
    }

    public var leading: [String] {
        panelNames.filter { machines[$0]?.canDecide(now: clock()) != nil }
    }

    /// `observing: false` skips the read of the election keys and the live nodes: a driver
    /// that watches those keys reads them only when the watch reports a change (and now
    /// and then), instead of two linearizable ranges on every step.
    public func step(observing: Bool = true) {
        let now = clock()
        for panel in panelNames { update(panel) { $0.tick(now: now) } }
        if !leaseIsExternal { renewLease() }
        if observing { observe() }
        retryPending()
        spread()
    }

    /// The running core used up most of its block: reserve the next one under the same term.
    /// `size`: how many fences (default `fenceBlockSize`; see `FenceBlockSizing`).
    public func reserveMoreFences(_ panel: String, size: UInt64? = nil) {
        guard case .leading(let term, _) = machines[panel]?.state else { return }
        reserveFences(panel, term: term, size: size ?? fenceBlockSize)
    }

    /// Gives `panel` up if this node still leads it in `term`: its driver stopped deciding
    /// it without this machine hearing why, and a leader that keeps the key without
    /// deciding would leave the panel dead. The key is deleted; a new term follows.
    public func resignIfLeading(_ panel: String, term: Int64) {
        guard case .leading(let leading, _) = machines[panel]?.state, leading == term else { return }
        update(panel) { $0.resign(reason: .leaseLost, now: clock()) }
    }

    /// Gives every panel up and revokes the lease: a clean shutdown hands over at once
    /// instead of after the TTL. Each panel stops deciding here whatever etcd answers;
    /// the calls only hasten the hand-over (the keys go with the lease, within its TTL).
    /// So once one of them fails, the rest are skipped: with etcd unreachable each would
    /// wait out the client's timeout (2 s): a node leading 11 of 30 panels took 25.6 s to
    /// stop after SIGTERM with two of three etcd members down, its clients not yet told
    /// goodbye (5.6 s since).
    public func shutdown() {
        shutdownCallsFailed = false
        shuttingDown = true
        defer { shuttingDown = false }
        for panel in panelNames { update(panel) { $0.resign(reason: .shutdown, now: clock()) } }
        if let id = lease.leaseID, !shutdownCallsFailed {
            do { try etcd.revokeLease(id) } catch { lastError = error }
        }
    }

    // MARK: Lease

    /// The lease as an external driver now holds it. Every panel's deadline is checked
    /// with the clock first, so a leader whose old deadline passed steps down before a
    /// later renewal could make it look as if it never had; unless the driver says the
    /// lease has been safe without a break since before the deadline this node knew
    /// (`safeSince`): then it was, and was only handed in late. (A break would have begun a
    /// new safe period after that deadline, since a newer deadline is never earlier.)
    public func adoptLease(_ newLease: NodeLeaseStateMachine, safeSince: Instant? = nil) {
        adopting = true
        defer { adopting = false }
        let now = clock()
        let before = lease
        let continuous =
            if let safeSince, let deadline = before.safeUntil, before.leaseID == newLease.leaseID { safeSince < deadline } else { false }
        if !continuous { for panel in panelNames { update(panel) { $0.tick(now: now) } } }
        lease = newLease
        switch newLease.state {
        case .held(let held, let safeUntil, _):
            if let old = before.leaseID, old != held.id { leaseEnded() }
            if before.leaseID != held.id || before.safeUntil != safeUntil { leaseChanged(.renewed(safeUntil: safeUntil)) }
        case .lost:
            if case .lost = before.state {} else { leaseChanged(.lost) }
        case .absent, .granting:
            if before.leaseID != nil { leaseChanged(.lost) }
        }
    }

    private func renewLease() {
        switch lease.tick(now: clock()) {
        case .grant:
            let sentAt = clock()
            lease.grantSent(now: sentAt)
            do {
                let granted = try etcd.grantLease(ttlSeconds: timing.ttlSeconds)
                leaseChanged(lease.granted(granted))
            } catch {
                lastError = error
                lease.grantFailed()
            }
        case .keepAlive(let id):
            let sentAt = clock()
            lease.keepAliveSent(now: sentAt)
            do {
                leaseChanged(lease.keepAliveAnswered(try etcd.keepAlive(lease: id), sentAt: sentAt))
            } catch {
                lastError = error
                leaseChanged(lease.keepAliveFailed(error))
            }
        case .none, .renewed, .lost:
            break
        }
    }

    private func pullExternalLease() {
        guard leaseIsExternal, !adopting, let external = externalLease?(), external.lease.state != lease.state else { return }
        adoptLease(external.lease, safeSince: external.safeSince)
    }

    private func leaseChanged(_ action: NodeLeaseStateMachine.Action) {
        switch action {
        case .renewed(let safeUntil):
            guard let id = lease.leaseID else { return }
            for panel in panelNames { update(panel) { $0.leaseRenewed(id: id, safeUntil: safeUntil, now: clock()) } }
        case .lost:
            leaseEnded()
            for panel in panelNames { update(panel) { $0.leaseLost(now: clock()) } }
        case .none, .grant, .keepAlive:
            break
        }
    }

    private func leaseEnded() {
        campaignsFrom = clock() + (timing.ttlSeconds * 1000 - timing.safetyMarginMilliseconds)
    }

    // MARK: Observing

    private func observe() {
        let leaders: EtcdRangeResponse
        let nodes: EtcdRangeResponse
        do {
            leaders = try etcd.range(.prefix(keys.panels))
            nodes = try etcd.range(.prefix(keys.nodes))
        } catch {
            lastError = error
            return
        }
        liveNodes = max(1, nodes.kvs.filter { keys.node(ofKey: $0.keyText) != nil }.count)
        var seen: [String: NodeRegistration] = [:]
        for kv in nodes.kvs {
            guard let node = keys.node(ofKey: kv.keyText) else { continue }
            seen[node] = NodeRegistration(address: kv.valueText, lease: kv.lease)
        }
        // Only an announcement under the registration's own lease counts: one left by an
        // earlier run of the node (another lease, about to expire) may name other features.
        for kv in nodes.kvs {
            guard let node = keys.node(ofFeaturesKey: kv.keyText), seen[node]?.lease == kv.lease else { continue }
            seen[node]?.features = ClusterFeatures.parse(kv.valueText)
        }
        registrations = seen
        register(seen: nodes.kvs)
        var current: [String: LeaderInfo] = [:]
        for kv in leaders.kvs {
            if let panel = keys.panel(ofLeaderKey: kv.keyText) { current[panel] = LeaderInfo(electionKey: kv) }
        }
        for panel in panelNames { update(panel) { $0.leaderObserved(current[panel], now: clock()) } }
    }

    /// Puts this node's registration under the current lease if it is not there: after a
    /// grant, and after anything that lost it.
    private func register(seen: [EtcdKeyValue]) {
        guard let id = lease.leaseID else { return }
        let key = keys.node(name)
        let featuresKey = keys.features(name)
        let announced = ClusterFeatures.value(features)
        let registered = seen.contains { $0.keyText == key && $0.lease == id }
        let featuresRegistered = features.isEmpty || seen.contains { $0.keyText == featuresKey && $0.lease == id && $0.valueText == announced }
        guard !registered || !featuresRegistered else { return }
        var puts: [EtcdOperation] = [.put(key, advertise, lease: id)]
        if !features.isEmpty { puts.append(.put(featuresKey, announced, lease: id)) }
        do {
            _ = try etcd.txn(EtcdTxn(compare: [], success: puts))
            registrations[name] = NodeRegistration(address: advertise, lease: id, features: features)
            liveNodes = max(liveNodes, seen.filter { $0.keyText != key }.count + 1)
        } catch {
            lastError = error
        }
    }

    private func retryPending() {
        for panel in panelNames {
            switch machines[panel]?.state {
            case .reserving(let term): reserveFences(panel, term: term)
            case .resigning(let term): resignKey(panel, term: term)
            case .following, .campaigning, .leading, nil: break
            }
        }
    }

    // MARK: Spreading

    private func spread() {
        let quota = PanelSpreading.quota(panels: panelNames.count, nodes: liveNodes, slack: timing.spreadSlack)
        let held = panelNames.filter { machines[$0]?.countsTowardQuota == true }
        if held.count > quota, let shed = held.last {
            // One at a time: each shed is a failover for that panel's users.
            update(shed) { $0.resign(reason: .rebalance, now: clock()) }
            return
        }
        var count = held.count
        guard !panelNames.isEmpty, campaignsFrom.map({ clock() >= $0 }) ?? true else { return }
        // Nodes start at different panels, so they rarely race for the same key.
        let offset = name.utf8.reduce(0) { ($0 &* 31 &+ Int($1)) & 0xFFFF } % panelNames.count
        for i in 0..<panelNames.count where count < quota {
            let panel = panelNames[(offset + i) % panelNames.count]
            guard machines[panel]?.isVacant == true else { continue }
            update(panel) { $0.wantsToLead(now: clock()) }
            if machines[panel]?.countsTowardQuota == true { count += 1 }
        }
    }

    // MARK: Performing actions

    private func update(_ panel: String, _ event: (inout PanelLeadershipStateMachine) -> [PanelLeadershipAction]) {
        pullExternalLease()
        guard var machine = machines[panel] else { return }
        let actions = event(&machine)
        machines[panel] = machine
        for action in actions { perform(action, for: panel) }
    }

    private func perform(_ action: PanelLeadershipAction, for panel: String) {
        onAction?(panel, action)
        switch action {
        case .campaign: campaign(panel)
        case .reserveFences(let term): reserveFences(panel, term: term)
        case .resign(let term): resignKey(panel, term: term)
        case .startDeciding, .extendFences, .stopDeciding, .follow: break
        }
    }

    private func campaign(_ panel: String) {
        let key = keys.leader(panel)
        // Registered under this lease first: a leader whose registration is not in etcd yet
        // has no address the other nodes can read. (The driver's lease can come in the middle
        // of a step, after its `observe` registered the node; the next step's will.)
        guard let leaseID = lease.leaseID, registrations[name]?.lease == leaseID else {
            update(panel) { $0.campaignFailed(now: clock()) }
            return
        }
        let txn = EtcdTxn(
            compare: [.createRevision(key, .equal, 0)],
            success: [.put(key, name, lease: leaseID)],
            failure: [.range(key)])
        do {
            let answer = try etcd.txn(txn)
            if answer.succeeded {
                update(panel) { $0.campaignWon(term: answer.revision, now: clock()) }
            } else {
                let holder = answer.rangeResult(0).first.flatMap(LeaderInfo.init(electionKey:))
                update(panel) { $0.campaignLost(to: holder, now: clock()) }
            }
        } catch {
            lastError = error
            update(panel) { $0.campaignFailed(now: clock()) }
        }
    }

    private func reserveFences(_ panel: String, term: Int64, size: UInt64? = nil) {
        let fenceKey = keys.fence(panel)
        let leaderKey = keys.leader(panel)
        do {
            let current = try etcd.range(.key(fenceKey)).kvs.first
            guard let reserved = FenceReservation(current: current, term: term, leaderKey: leaderKey, fenceKey: fenceKey, size: size ?? fenceBlockSize) else {
                lastError = .malformed("\(fenceKey) holds \(current?.valueText ?? "")")
                onFenceReservation?(panel, lastError)
                return
            }
            let answer = try etcd.txn(reserved.txn)
            if answer.succeeded {
                onFenceReservation?(panel, nil)
                update(panel) { $0.fencesReserved(reserved.block, now: clock()) }
            } else {
                let holder = answer.rangeResult(0).first
                let deposed = holder?.createRevision != term
                update(panel) { $0.fenceReservationFailed(term: term, deposed: deposed, now: clock()) }
            }
        } catch {
            lastError = error
            onFenceReservation?(panel, error)
            update(panel) { $0.fenceReservationFailed(term: term, deposed: false, now: clock()) }
        }
    }

    private func resignKey(_ panel: String, term: Int64) {
        if shuttingDown, shutdownCallsFailed { return }
        let key = keys.leader(panel)
        do {
            _ = try etcd.txn(EtcdTxn(compare: [.createRevision(key, .equal, term)], success: [.delete(key)]))
            update(panel) { $0.resignDone(now: clock()) }
        } catch {
            lastError = error
            if shuttingDown { shutdownCallsFailed = true }
        }
    }
}
