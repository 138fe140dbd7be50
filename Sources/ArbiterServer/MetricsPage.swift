import ArbiterCore
import Synchronization

/// Gathers every counter (panels are read on their own queues) into /metrics text.
struct MetricsPage {
    let server: ServerState

    func render() -> String {
        var total = PanelCounters()
        var members = 0
        for host in server.panels {
            total.merge(host.queue.sync { host.counters })
            members += host.memberCount.load(ordering: .relaxed)
        }
        let m = server.metrics
        func value(_ counter: Metrics.Counter) -> Int { m.value(counter) }
        let opened = value(.connectionsOpened)
        var p = PrometheusText()
        p.gauge("arbiter_connections", "Open connections.", opened - value(.connectionsClosed))
        p.counter("arbiter_connections_total", "Connections accepted.", opened)
        p.gauge("arbiter_panel_members", "Members joined, summed over panels.", members)
        p.counter("arbiter_commands_total", "Commands run (panel and session commands).", total.commands + value(.localCommands))
        p.counter("arbiter_grants_total", "Buttons granted (PRESSED).", total.grants)
        p.counter("arbiter_denials_total", "DOWNs denied (busy or forbidden).", total.denials)
        p.counter("arbiter_fires_total", "Button actions fired (FIRED).", total.fires)
        p.counter("arbiter_events_total", "Panel events broadcast.", total.events)
        p.counters(
            "arbiter_releases_total", "Ownerships ended, by reason.", label: "reason",
            ReleaseReason.allCases.filter { $0 != .failover || server.cluster != nil }.map { ($0.rawValue, total.releases[$0.index]) })
        p.counter("arbiter_slow_consumer_drops_total", "Peers disconnected for not reading their output.", value(.slowConsumerDrops))
        p.counter("arbiter_rate_limited_total", "Commands refused by the per-session rate limit.", value(.rateLimited))
        p.counter("arbiter_server_full_total", "Connections refused because the server was full.", value(.serverFull))
        p.counter(
            "arbiter_missed_wakeups_total", "Times the once-a-second sweep found sockets ready that no wake-up had served.",
            value(.missedWakeups))
        p.counter(
            "arbiter_host_refused_total", "HTTP requests refused 421 for a Host that is not the server's (DNS rebinding).",
            value(.hostRefused))
        p.counter("arbiter_origin_refused_total", "WebSocket upgrades refused 403 for another site's Origin.", value(.originRefused))
        p.counter(
            "arbiter_key_failures_total", "Keys presented that match no panel (HELLO key=, Authorization: Bearer).",
            value(.keyFailures))
        p.counter(
            "arbiter_key_lockouts_total", "Keys refused unchecked because their address had too many wrong ones.",
            value(.keyLockedOut))
        p.gauge(
            "arbiter_output_queued_bytes", "Unsent output of all peers together (in 4 KiB units per peer).",
            server.outputBudget.queuedBytes)
        p.counter(
            "arbiter_output_budget_cuts_total", "Peers disconnected, largest backlog first, because all peers together had too much unsent output.",
            value(.outputBudgetCuts))
        p.counter("arbiter_http_requests_total", "HTTP requests answered.", value(.httpRequests))
        p.counter("arbiter_websocket_upgrades_total", "WebSocket sessions opened.", value(.webSocketUpgrades))
        if let journal = server.journal {
            p.counter(
                "arbiter_journal_unavailable_total", "Presses refused (ERROR unavailable) because the journal could not be written.",
                journal.refusals.load(ordering: .relaxed))
            p.gauge("arbiter_journal_healthy", "1 while the journal can be written, 0 while presses are refused.", journal.isHealthy ? 1 : 0)
        }
        if let cluster = server.cluster { clusterMetrics(cluster, into: &p) }
        p.histogram("arbiter_command_seconds", "Time from reading a panel command to its reply being queued.", total.latency)
        return p.text
    }

    private func clusterMetrics(_ cluster: ClusterContext, into p: inout PrometheusText) {
        p.gauge("arbiter_cluster_panels_led", "Panels this node decides now.", cluster.ledPanels())
        p.gauge("arbiter_cluster_nodes", "Nodes registered in etcd, this one included.", cluster.nodes().count)
        // `/healthz` stays `200 ok` as PROTOCOL.md has it; this says whether the node can
        // serve presses now, for a balancer that should send kiosks to another node.
        p.gauge(
            "arbiter_cluster_lease_lapsed",
            "Whether this node's etcd lease lapsed (etcd without a majority, or this node cut off from it); while it is 1 the node decides and relays no press.",
            cluster.isLapsed ? 1 : 0)
        p.gauge(
            "arbiter_cluster_fence_reservations_failing",
            "Panels this node leads whose next block of fences etcd refuses now (out of space, say): their presses past the block get ERROR unavailable.",
            cluster.fenceTroubleCount())
        let stats = cluster.runtime?.statistics
        let reasons = ["leaseDeadline", "leaseLost", "deposed", "rebalance", "shutdown"]
        p.counters(
            "arbiter_cluster_step_downs_total", "Times this node stopped deciding a panel, by reason.", label: "reason",
            reasons.map { ($0, stats?.stepDowns[$0] ?? 0) })
        p.counter("arbiter_cluster_keepalives_failed_total", "Lease keepalives etcd did not answer.", stats?.keepAlivesFailed ?? 0)
        p.gauge("arbiter_cluster_relay_links_up", "Relay links to other nodes that are up.", cluster.relayLinksUp())
        p.counter(
            "arbiter_cluster_relayed_commands_total", "Commands of local sessions sent to a panel's leader on another node.",
            cluster.relayedOut.load(ordering: .relaxed))
        p.counter("arbiter_cluster_relayed_in_total", "Commands of other nodes' sessions received to decide here.", cluster.relayedIn.load(ordering: .relaxed))
        p.counter(
            "arbiter_cluster_stale_frames_total", "Relay frames dropped because their term is not the current one.",
            cluster.staleFrames.load(ordering: .relaxed))
    }
}
