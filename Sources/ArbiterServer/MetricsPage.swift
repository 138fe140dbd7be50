import ArbiterCore
import Synchronization

/// Gathers every counter (panels are read on their own queues) into /metrics text.
struct MetricsPage {
    let server: ServerState

    func render() -> String {
        var total = PanelCounters()
        var members = 0
        var late: UInt64 = 0
        var ranked: (readThrough: UInt64, window: UInt64) = (0, 0)
        for host in server.panels {
            let (counters, lateArrivals, rankedBy) = host.queue.sync { (host.counters, host.core.lateArrivals, host.core.rankedBy) }
            total.merge(counters)
            late += lateArrivals
            ranked = (ranked.readThrough + rankedBy.readThrough, ranked.window + rankedBy.window)
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
        p.counter(
            "arbiter_key_ceiling_refusals_total", "Keys refused unchecked because the whole server had too many wrong ones in the last second.",
            value(.keyCeilingRefused))
        p.gauge(
            "arbiter_output_queued_bytes", "Unsent output of all peers together (in 4 KiB units per peer).",
            server.outputBudget.queuedBytes)
        p.counter(
            "arbiter_output_budget_cuts_total", "Peers disconnected, largest backlog first, because all peers together had too much unsent output.",
            value(.outputBudgetCuts))
        if server.stampsArrivals {
            var sources = [0, 0, 0]
            for reactor in server.reactors {
                sources[0] += reactor.arrivalCounts.stamped.load(ordering: .relaxed)
                sources[1] += reactor.arrivalCounts.unstamped.load(ordering: .relaxed)
                sources[2] += reactor.arrivalCounts.clockStepped.load(ordering: .relaxed)
            }
            p.counters(
                "arbiter_arrival_reads_total",
                "Reads of client sockets by where their arrival time came from: the kernel's receive stamp, or the read time because no stamp came or the wall clock moved.",
                label: "source", [("kernel", sources[0]), ("read-no-stamp", sources[1]), ("read-clock-step", sources[2])])
            if server.readWatermark != nil {
                let behind = server.reactors.reduce(0) { $0 + $1.arrivalCounts.behindReadMark.load(ordering: .relaxed) }
                let lag = server.reactors.reduce(Int64(0)) { max($0, $1.arrivalCounts.behindReadMarkMaxNs.load(ordering: .relaxed)) }
                p.counter(
                    "arbiter_arrival_behind_read_mark_total",
                    "Stamped reads whose kernel stamp came before what their reactor had already read through: the kernel queued them later than it stamped them.",
                    behind)
                p.gauge("arbiter_arrival_behind_read_mark_max_us", "The largest such lag, in microseconds.", Int(lag / 1000))
            }
        }
        p.counter(
            "arbiter_buzzer_late_presses_total", "Buzzer presses read after their decision window, ranked behind a press that arrived after them.",
            Int(late))
        if server.readWatermark != nil {
            p.counters(
                "arbiter_buzzer_ranked_total",
                "Buzzer presses ranked once every reactor had read through their arrival, or when their decision window ended first.",
                label: "by", [("read-through", Int(ranked.readThrough)), ("window", Int(ranked.window))])
        }
        p.counter("arbiter_http_requests_total", "HTTP requests answered.", value(.httpRequests))
        p.counter("arbiter_websocket_upgrades_total", "WebSocket sessions opened.", value(.webSocketUpgrades))
        if let journal = server.journal {
            p.counter(
                "arbiter_journal_unavailable_total", "Presses refused (ERROR unavailable) because the journal could not be written.",
                journal.refusals.load(ordering: .relaxed))
            p.gauge("arbiter_journal_healthy", "1 while the journal can be written, 0 while presses are refused.", journal.isHealthy ? 1 : 0)
        }
        if let hooks = server.hooks { HookMetrics.write(hooks, into: &p) }
        server.cluster?.writeMetrics(into: &p)
        p.histogram("arbiter_command_seconds", "Time from reading a panel command to its reply being queued.", total.latency)
        return p.text
    }
}
