import ArbiterServer
import ArbiterCluster
import ArbiterCore
import ArbiterHooks
import ArbiterIO
import ArbiterWire

/// Cluster mode, the side of the node that decides a panel: leadership starts and stops
/// on the panel's queue, every decision first asks the runtime, and the fences it hands
/// out come in blocks asked for ahead (relayed sessions run in the core as sessions of
/// their own node: `LeaderDuties`).
struct Leadership: ClusterPanelPart {
    let panel: ClusterPanel

    /// Whether this node may decide the panel at this instant. A node that led and may no
    /// longer (its safe deadline passed, its lease is gone) steps down here, before it
    /// looks at whatever it was about to decide. On `queue`.
    func mayDecideNow() -> Bool {
        guard let block = panel.clusterState.block, let runtime = cluster?.runtime else { return false }
        // The last answer holds while neither the lease nor the runtime's table changed and
        // the deadline is ahead: every press batch would otherwise pay two locks and a
        // lookup by name (about 1,000 of a leader's ~7,000 instructions per DOWN/UP).
        if let window = panel.clusterState.deciding?.window, window.block.term == block.term, runtime.stillDecides(window) { return true }
        guard let window = runtime.decisionWindow(config.id), window.block.term == block.term else {
            panel.clusterState.deciding?.window = nil
            stopDeciding(term: block.term, reason: .leaseDeadline)
            return false
        }
        panel.clusterState.deciding?.window = window
        if window.block.last != block.last { adopt(window.block) }
        return true
    }

    /// This node now decides the panel in `term`: a fresh core above every fence ever
    /// reserved, and this node's members joined to it again, each getting the new term's
    /// snapshot as its JOIN reply. On `queue` (the runtime's callback).
    func becameLeader(term: Int64, fenceFloor: UInt64, block: FenceBlock) {
        assertOnQueue()
        guard let cluster else { return }
        var flush = FlushList()
        failover.failInFlight(because: "panel \(config.id)'s leader changed before it answered", flush: &flush)
        failover.owedFailover(newTerm: term, flush: &flush)
        waits.endWaits(flush: &flush)
        var fresh = PanelCore(config: config, lastFence: fenceFloor, fenceFloor: fenceFloor)
        fresh.term = term
        fresh.fenceLimit = block.last
        core = fresh
        panel.clusterState.standing = .leading(Deciding(block: block, rateMark: (at: clock.now().milliseconds, fence: fenceFloor)))
        panel.clusterState.leader.node = cluster.node
        panel.clusterState.leader.address = cluster.setup.advertise
        panel.clusterState.leader.term = term
        panel.clusterState.relayed.forgetRemoteSessions()
        waiters = [:]
        var joiners = members
        for (session, connection) in panel.clusterState.following.pendingJoins { joiners[session] = connection }
        panel.clusterState.following.pendingJoins = [:]
        // Each member is a member again only from its own snapshot on: nothing of the new
        // term may reach it before that.
        members = [:]
        host.memberCount.store(0, ordering: .relaxed)
        let now = clock.now()
        for (session, connection) in joiners.sorted(by: { $0.key < $1.key }) {
            guard let identity = panel.clusterState.following.memberIdentity[session] else { continue }
            members[session] = connection
            host.memberCount.add(1, ordering: .relaxed)
            output.removeAll()
            core.handle(.join, session: session, name: identity.name, access: access(key: identity.key), now: now, into: &output)
            // A session's own JOIN that waited for a leader is answered in its form and id.
            let parked = panel.clusterState.following.parkedJoins.removeValue(forKey: session)
            if let reply = output.reply {
                flush.answer(parked?.slot, to: connection, panel: index) { [names] out, format in
                    MessageEncoder.encode(reply, names: names, format: parked?.format ?? format, id: parked?.id, into: &out)
                }
            }
            deliver(replyTo: nil, format: .text, id: nil, flush: &flush)
        }
        finishBatch(&flush)
        if host.hooks != nil {
            cluster.hookStore.load(panel: config.id) { [panel] found in panel.queue.async { panel.leadership.resumeHooks(found, term: term) } }
        }
    }

    /// What the panel's earlier leaders left undelivered is this node's to deliver now,
    /// same id, same body, while it still leads in `term`. What this term made itself is
    /// already with its hooks. On `queue`.
    func resumeHooks(_ found: [ClusterHookStore.Found], term: Int64) {
        assertOnQueue()
        guard let hooks = host.hooks, let cluster, panel.clusterState.block?.term == term else { return }
        let earlier = found.filter { $0.term != term }.map(\.pending)
        guard !earlier.isEmpty else { return }
        let unmatched = hooks.resume(
            earlier, wallMs: clock.wallMilliseconds(), log: HookLog(cluster.log), why: "hook deliveries taken over from the panel's last leader")
        if unmatched > 0 {
            cluster.log.warning("undelivered hook events dropped: their hook is no longer in the config", ["panel": config.id, "events": "\(unmatched)"])
        }
    }

    /// More fences, same term. On `queue`.
    func fencesExtended(_ block: FenceBlock) {
        assertOnQueue()
        guard let current = panel.clusterState.block, current.term == block.term else { return }
        adopt(block)
    }

    private func adopt(_ block: FenceBlock) {
        panel.clusterState.deciding?.block = block
        panel.clusterState.deciding?.extensionAskedAt = nil
        core.fenceLimit = block.last
        // A queue's hand-off that waited for a fence may go on now.
        if core.hasFairGroups {
            var flush = FlushList()
            output.removeAll()
            core.advance(to: clock.now(), into: &output)
            deliver(replyTo: nil, format: .text, id: nil, flush: &flush)
            finishBatch(&flush)
        }
    }

    /// Stops deciding: every grant ends with `RELEASED ... reason=failover` (no seq) to
    /// every member, here and, once per node, on the nodes relaying members, then an idle
    /// snapshot of the term that ended; the core is dropped, so no timer of it can fire
    /// later. Once per term. On `queue`.
    func stopDeciding(term: Int64, reason: StepDownReason) {
        assertOnQueue()
        guard let cluster, let block = self.panel.clusterState.block, block.term == term else { return }
        self.panel.clusterState.standing = .following
        // Kept in etcd, they are the next leader's to deliver, this node's again if it is.
        host.hooks?.abandon()
        let now = clock.now()
        let grants = core.liveGrants
        failover.localGrantsEndedWithTerm(grants, node: cluster.node)
        // The ended term's members, fence and seq, with its buttons and groups as the
        // next term's core starts them: every button idle, a queue's line empty, a buzzer
        // round closed (shown as every snapshot shows its groups).
        var snapshot = core.snapshot(at: now)
        let endingGroups = snapshot.groups
        let fresh = PanelCore(config: config, lastFence: core.lastFence, fenceFloor: core.highestFence)
        let idle = fresh.snapshot(at: now)
        snapshot.buttons = idle.buttons
        snapshot.groups = idle.groups
        let panel = config
        var flush = FlushList()
        for member in members.values {
            flush.append(to: member, panel: index) { [names] out, format in
                for (button, owner) in grants {
                    MessageEncoder.encodeFailoverRelease(panel: panel, button: button, owner: owner.name, fence: owner.fence, format: format, into: &out)
                }
                MessageEncoder.encode(PanelReply.joined(snapshot), names: names, format: format, id: nil, into: &out)
            }
        }
        counters.releases[ReleaseReason.failover.index] += grants.count
        if !self.panel.clusterState.relayed.memberNodes.isEmpty {
            var lines: [RelayEventLine] = []
            for (button, owner) in grants {
                var text: [UInt8] = []
                var json: [UInt8] = []
                MessageEncoder.encodeFailoverRelease(panel: panel, button: button, owner: owner.name, fence: owner.fence, format: .text, into: &text)
                MessageEncoder.encodeFailoverRelease(panel: panel, button: button, owner: owner.name, fence: owner.fence, format: .json, into: &json)
                lines.append(RelayEventLine(fact: .released(button: button, fence: owner.fence, reason: .failover), text: text, json: json))
            }
            var text: [UInt8] = []
            var json: [UInt8] = []
            MessageEncoder.encode(PanelReply.joined(snapshot), names: names, format: .text, id: nil, into: &text)
            MessageEncoder.encode(PanelReply.joined(snapshot), names: names, format: .json, id: nil, into: &json)
            lines.append(RelayEventLine(fact: .plain, text: text, json: json))
            duties.relay(lines: lines, term: term, seq: 0, cluster, leaseEpoch: 0)
        }
        waits.endLocalWaits(endingGroups, flush: &flush)
        host.giveUpDeferredReplies("panel \(config.id) stopped being decided here before this press was ranked; \(ClusterPanel.retryHint)", flush: &flush)
        core = fresh
        self.panel.clusterState.relayed.forgetRemoteSessions()
        waiters = [:]
        if self.panel.clusterState.leader.node == cluster.node {
            self.panel.clusterState.leader.node = nil
            self.panel.clusterState.leader.address = nil
            self.panel.clusterState.leader.term = nil
        }
        cluster.log.info("panel stopped deciding", ["panel": config.id, "term": "\(term)", "reason": "\(reason)", "failover_releases": "\(grants.count)"])
        finishBatch(&flush)
    }

    /// A DOWN may take a fence only inside the block; past it, it waits for the next one.
    func fenceRefusal(_ request: PanelRequest) -> String? {
        guard case .press(let press) = request, press.verb == .down, let block = panel.clusterState.block else { return nil }
        guard core.nextFence > block.last else { return nil }
        askForFences()
        if let problem = cluster?.fenceTrouble(of: config.id) {
            return "panel \(config.id) cannot reserve its next block of fences in etcd (\(problem)); nothing was done, "
                + "and presses work again once etcd takes it (this node's log says more)"
        }
        return "panel \(config.id) is reserving its next block of fences; \(ClusterPanel.retryHint)"
    }

    /// At 80 % of the block, the next one is asked for (same term).
    func afterDecision() {
        guard let block = panel.clusterState.block else { return }
        let size = block.last - block.first + 1
        let used = core.highestFence >= block.first ? core.highestFence - block.first + 1 : 0
        if used * 5 >= size * 4 { askForFences() }
    }

    /// Once, and again every 500 ms while it is still needed: a reservation that failed
    /// (etcd busy) is not waited for forever.
    private func askForFences() {
        guard let runtime = cluster?.runtime else { return }
        let now = clock.now().milliseconds
        guard let deciding = panel.clusterState.deciding else { return }
        if let asked = deciding.extensionAskedAt, now - asked < 500 { return }
        panel.clusterState.deciding?.extensionAskedAt = now
        let highest = core.highestFence
        let mark = deciding.rateMark
        panel.clusterState.deciding?.rateMark = (at: now, fence: highest)
        let size = FenceBlockSizing.next(used: highest >= mark.fence ? highest - mark.fence : 0, elapsedMilliseconds: now - mark.at)
        runtime.reserveMoreFences(config.id, size: size)
    }
}
