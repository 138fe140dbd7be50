import ArbiterCluster
import ArbiterCore
import ArbiterHooks
import ArbiterIO
import ArbiterServer
import ArbiterWire

/// The node as the server sees it (`ServerCluster`): its start-up checks and what its
/// answers need from the cluster.
extension ClusterContext: ServerCluster {
    var sessionBase: Int { setup.sessionBase }

    var owedReplyLimitMs: Int64 { setup.owedReplyLimitMs }

    /// `KICK` of a session this node does not have (`ClusterKicks.kickElsewhere`).
    func kickElsewhere(_ target: SessionID, by admin: Connection, format: WireFormat, id: CommandID?) -> Bool {
        kicks.kickElsewhere(target, by: admin, format: format, id: id)
    }

    /// The panels, once made: each gets its `ClusterPanel` as its role (which holds this
    /// context). `kick` is the server's KICK of one of its sessions for another node's admin.
    func attach(_ panels: [PanelHost], kick: @escaping @Sendable (SessionID, String?, SessionID) -> KickOutcome) {
        onKick = kick
        let roles = panels.map { ClusterPanel(host: $0, cluster: self) }
        for role in roles { role.host.adopt(role) }
        hostTable.withLock { $0 = Dictionary(uniqueKeysWithValues: roles.map { ($0.config.id, $0) }) }
    }

    /// Before listening: publish this node's config or compare it with the cluster's, and
    /// raise the fence keys to what a journal handed out (`ClusterStartup`).
    func prepare(panels: [PanelConfig], journalFences: [String: UInt64]) throws(ClusterStartFailure) {
        try ClusterStartup(setup: setup, log: log).prepare(panels: panels, journalFences: journalFences)
    }

    /// Refuses to start a node whose `--advertise` leads elsewhere (`AdvertiseCheck`), before
    /// it takes part in any election. Returns the clients' connections accepted meanwhile.
    func checkReachable(listener: (fd: Int32, port: UInt16), host: String) throws -> [(fd: Int32, peer: String)] {
        guard setup.checksAdvertise else { return [] }
        guard let address = RelayAddress(setup.advertise) else {
            Sys.close(listener.fd)
            throw ClusterStartFailure("--advertise \(setup.advertise) is not a host:port address")
        }
        var check = AdvertiseCheck(address: address, listener: listener.fd)
        let outcome = check.run()
        guard let refusal = AdvertiseCheck.refusal(outcome, advertise: setup.advertise, port: listener.port) else {
            log.info("advertised address reaches this node", ["advertise": setup.advertise])
            if let warning = AdvertiseCheck.loopbackWarning(advertiseHost: address.host, listenHost: host) {
                log.warning(warning, ["advertise": setup.advertise, "host": host])
            }
            return check.others
        }
        for connection in check.others { Sys.close(connection.fd) }
        Sys.close(listener.fd)
        throw ClusterStartFailure(refusal)
    }

    var hookPersistence: any HookPersistence { hookStore }

    func writeMetrics(into p: inout PrometheusText) {
        p.gauge("arbiter_cluster_panels_led", "Panels this node decides now.", ledPanels())
        p.gauge("arbiter_cluster_nodes", "Nodes registered in etcd, this one included.", nodes().count)
        // `/healthz` stays `200 ok` as PROTOCOL.md has it; this says whether the node can
        // serve presses now, for a balancer that should send kiosks to another node.
        p.gauge(
            "arbiter_cluster_lease_lapsed",
            "Whether this node's etcd lease lapsed (etcd without a majority, or this node cut off from it); while it is 1 the node decides and relays no press.",
            isLapsed ? 1 : 0)
        p.gauge(
            "arbiter_cluster_fence_reservations_failing",
            "Panels this node leads whose next block of fences etcd refuses now (out of space, say): their presses past the block get ERROR unavailable.",
            fenceTroubleCount())
        let stats = runtime?.statistics
        let reasons = ["leaseDeadline", "leaseLost", "deposed", "rebalance", "shutdown"]
        p.counters(
            "arbiter_cluster_step_downs_total", "Times this node stopped deciding a panel, by reason.", label: "reason",
            reasons.map { ($0, stats?.stepDowns[$0] ?? 0) })
        p.counter("arbiter_cluster_keepalives_failed_total", "Lease keepalives etcd did not answer.", stats?.keepAlivesFailed ?? 0)
        p.gauge("arbiter_cluster_relay_links_up", "Relay links to other nodes that are up.", nodeWatch.linksUpCount)
        p.counter(
            "arbiter_cluster_relay_handshakes_refused_total",
            "Inbound relay handshakes that did not finish: no free slot, too slow, no cluster key, not a relay peer, or left midway.",
            network?.statistics.refusals ?? 0)
        p.counter(
            "arbiter_cluster_relayed_commands_total", "Commands of local sessions sent to a panel's leader on another node.",
            relayedOut.load(ordering: .relaxed))
        p.counter("arbiter_cluster_relayed_in_total", "Commands of other nodes' sessions received to decide here.", relayedIn.load(ordering: .relaxed))
        p.counter(
            "arbiter_cluster_stale_frames_total", "Relay frames dropped because their term is not the current one.",
            staleFrames.load(ordering: .relaxed))
    }

    /// The reactor's hand-off of a connection that began with `RELAY-`.
    func adoptRelay(fd: Int32, peer: String, firstBytes: [UInt8]) {
        guard let network else {
            Sys.close(fd)
            return
        }
        network.adopt(fd: fd, peer: peer, firstBytes: firstBytes, nodeAddresses: runtime.map { Array($0.nodeAddresses().values) } ?? [])
    }

    /// Every live node, sorted by name (GET /api/nodes).
    func nodes() -> [(node: String, address: String)] {
        var addresses = runtime?.nodeAddresses() ?? [:]
        addresses[setup.node] = setup.advertise
        return addresses.map { ($0.key, $0.value) }.sorted { $0.node < $1.node }
    }

    /// Panels this node decides now (for /metrics).
    func ledPanels() -> Int {
        guard let runtime else { return 0 }
        return hosts.keys.filter { runtime.canDecide($0) != nil }.count
    }

    // MARK: Leaders' state

    // `GET /api/panels` on any node shows each panel as its leader has it: a node that
    // follows a panel asks the leader's node (`RelayMessage.stateQuery`) and answers with
    // what comes back (`LeaderStateGather`).

    /// Asks `leader` for `panel`'s state; `done` gets the leader's JSON object. Nil (and
    /// nothing sent) when the leader's node did not announce `panel-state` (an older
    /// version, which would close the link on the frame) or no link can carry it.
    func queryState(of panel: String, leader: String, address: String?, done: @escaping RelayQueries<[UInt8]>.Done) -> UInt64? {
        guard leader != node, runtime?.node(leader, supports: ClusterFeatures.panelState) == true else { return nil }
        let id = stateQueries.open(panel, node: leader, done: done)
        guard send(.stateQuery(panel: panel, id: id), toNode: leader, address: address) else {
            stateQueries.forget(id)
            return nil
        }
        return id
    }

    func forgetStateQuery(_ id: UInt64) { stateQueries.forget(id) }

    /// The leader's answer, past term fencing (`FollowerRelay.relayedFromLeader`).
    func stateAnswered(_ id: UInt64, panel: String, state: [UInt8], from node: String) {
        stateQueries.settle(id, panel, from: node)?(state)
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
                host.clusterState.relayed.typedEventNodes(typed)
                host.failover.checkAnswers()
                host.duties.checkKeptMembers()
                host.failover.forgetGone()
            }
        }
    }
}
