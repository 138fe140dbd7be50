import ArbiterCore

/// Writes a `LoadResult` for people (text) or machines (`--json`).
public enum LoadReport {
    public static func text(_ r: LoadResult) -> String {
        let o = r.options
        let ids = o.panelIDs
        let panels = ids.count == 1 ? "panel \(ids[0])" : "panels \(ids[0])..\(ids[ids.count - 1])"
        var out = ["arbiter-load \(o.workload.rawValue) against \(r.target)" + (o.isRedis || o.workload == .idle ? "" : " (\(panels))")]
        let line = r.connections - r.webSocketConnections
        let forms = o.isRedis ? "RESP" : "\(line) line, \(r.webSocketConnections) WebSocket"
        var who = "\(r.connections) (\(forms))"
        if r.observers > 0 { who += " + \(r.observers) observer" + (r.observers == 1 ? "" : "s") }
        if o.workload == .fanout {
            who =
                "\(r.pressers) presser" + (r.pressers == 1 ? "" : "s") + ", \(r.connections) members (\(forms))"
                + (r.observers > 0 ? " + \(r.observers) observer" + (r.observers == 1 ? "" : "s") : "")
        }
        out.append("  connections   \(who), \(o.threads) thread" + (o.threads == 1 ? "" : "s"))
        // A run that failed before measuring has no figures worth printing.
        if o.workload != .idle && !(r.failure != nil && r.measuredSeconds == 0) {
            if r.buttons > 0 {
                out.append("  buttons       \(r.buttons)" + (r.panels > 1 ? " (\(r.buttons / r.panels) on each of \(r.panels) panels)" : ""))
            }
            out.append("  measured      \(fixed(r.measuredSeconds, 2)) s" + (o.warmup > 0 ? " after \(fixed(o.warmup, 2)) s warm-up" : ""))
            if r.isGeneratorBound, let cpu = r.generatorCPU {
                out.append(
                    "  GENERATOR-BOUND  the generator used \(percent(cpu / r.measuredSeconds)) of a core"
                        + (r.generatorCores > 1 ? " (\(r.generatorCores) threads)" : "")
                        + ": it, not the server, may have set the pace; the figures below are a lower bound (try --threads, or run it on another machine)")
            }
            if o.workload == .fanout {
                // Fanout measures delivery: the pressers only feed it, so their figure comes second.
                out.append("  events/s      \(count(r.eventsPerSecond))   delivered to members")
                out.append(
                    "  presser ops/s \(count(r.opsPerSecond))   " + (o.isRedis ? "PUBLISH replies to the pressers" : "replies to the pressers' DOWN and UP"))
            } else {
                out.append("  ops/s         \(count(r.opsPerSecond))   replies to timed requests")
            }
            out.append("  cycles/s      \(count(r.cyclesPerSecond))   " + (o.workload == .fanout && o.isRedis ? "PUBLISH answered" : "granted, then released"))
            out.append("  grants        \(count(Double(r.stats.grants)))   denials \(count(Double(r.stats.denials)))   errors \(r.stats.errors)")
            if r.stats.rateLimited > 0 {
                out.append("  rate-limited  \(count(Double(r.stats.rateLimited)))   retried; the server's --rate limit (give it --rate 0 to measure capacity)")
            }
            if o.workload == .queue {
                out.append(
                    "  hand-offs/s   \(count(Double(r.stats.handOffs) / max(r.measuredSeconds, 1e-9)))   grants to the head of a line   queued \(count(Double(r.stats.queued)))"
                )
            }
            if o.workload == .buzz {
                out.append(
                    "  rounds/s      \(count(Double(r.stats.rounds) / max(r.measuredSeconds, 1e-9)))   rounds \(r.stats.rounds)   ranked \(count(Double(r.stats.ranked)))   early DOWNs denied \(r.stats.earlyDenied)\(r.stats.abandonedRounds > 0 ? "   rounds abandoned \(r.stats.abandonedRounds)" : "")"
                )
                let order = r.stats.arrivals.summary(players: o.connectionCount)
                out.append(
                    "  send order    \(order.inversions) of \(order.pairs) pairs sent >= 100 us apart ranked the other way, in \(order.rounds) whole rounds; winner not the first sender \(order.winnerInversions); any gap: \(order.allInversions), the largest \(order.largestInvertedGapNs / 1000) us"
                )
            }
            if r.stats.reconnects > 0 {
                out.append("  reconnects    \(r.stats.reconnects)   connections whose node went away, connected to another (--hosts)")
            }
            if r.stats.unavailable + r.stats.failoverUps > 0 {
                out.append(
                    "  unavailable   \(r.stats.unavailable)   DOWNs refused while the panel had no leader, retried   failover UPs \(r.stats.failoverUps)   grants a failover had ended"
                )
            }
            if r.stats.linesLost > 0 {
                out.append("  lines lost    \(r.stats.linesLost)   waits in a queue's line a failover ended (DEQUEUED reason=failover), pressed again")
            }
            if r.stats.lateUps > 0 { out.append("  late UPs      \(r.stats.lateUps)   stale-fence after the hold fired and another press began") }
            if o.workload != .fanout { out.append("  events/s      \(count(r.eventsPerSecond))   delivered to members") }
            if o.workload == .buzz {
                // Each player's own place, and an announced one as the observers read it.
                out.append("  press->RANKED   " + latency(r.stats.reply) + "   (the winner's GRANTED among them)")
                out.append("  press->BUZZED   " + latency(r.stats.event) + "   at observers, places 2 to \(o.announcedPlaces)")
            } else {
                out.append("  request->reply  " + latency(r.stats.reply))
                out.append("  press->event    " + latency(r.stats.event))
            }
            if let cpu = r.generatorCPU, r.measuredSeconds > 0 {
                var text = "  cpu           generator \(percent(cpu / r.measuredSeconds)) of a core"
                if let server = r.serverCPU { text += ", server \(percent(server / r.measuredSeconds))" }
                out.append(text)
            }
        }
        if let before = r.memoryBefore, let after = r.memoryAfter, let per = r.memoryPerConnection {
            out.append("  server memory before \(mib(before)), after \(mib(after)): \(count(per)) bytes per connection")
        } else if o.workload == .idle {
            out.append("  server memory not measured (give --server-pid)")
        }
        for sample in r.stats.errorSamples { out.append("  error: \(sample)") }
        if r.checked || r.overlapChecked { out += safety(r) }
        if let failure = r.failure { out.append("  FAILED: \(failure)") }
        return out.joined(separator: "\n")
    }

    /// The live progress line, led by the figure the workload measures, as the report is.
    public static func progress(_ p: LiveProgress, workload: Workload) -> String {
        let head = "[\(fixed(p.elapsed, 1)) s]"
        guard p.phase != "connecting" else { return "\(head) connecting \(p.ready)/\(p.total)" }
        let ops = "\(count(p.opsPerSecond)) " + (workload == .fanout ? "presser ops/s" : "ops/s")
        let events = "\(count(p.eventsPerSecond)) events/s"
        let p99 = "p99 \(ms(p.p99))"
        let figures = workload == .fanout ? [events, ops, p99] : [ops, p99, events]
        return "\(head) \(p.phase) " + figures.joined(separator: "  ") + "  errors \(p.errors)"
    }

    /// The safety section: what each checker looked at, then any violation.
    static func safety(_ r: LoadResult) -> [String] {
        var what: [String] = []
        if r.checked {
            var compared = "\(count(Double(r.eventsChecked))) events checked, \(count(Double(r.eventsCompared))) compared across members"
            // Zero compared is not zero checked: there was nobody to compare with.
            if r.eventsCompared == 0 && r.eventReadersPerPanel < 2 {
                compared +=
                    r.options.workload == .fanout
                    ? " (comparing needs 2+ members of the panel: give --members 2 or more)"
                    : " (comparing needs 2+ connections reading a panel's events: give --observers 2 or more)"
            }
            what.append(compared)
            if r.undecidedGrants > 0 {
                what.append("\(r.undecidedGrants) grants without a GRANTED, each answered \"may or may not have been done\"")
            }
            if r.lostHandOffs > 0 {
                what.append("\(r.lostHandOffs) hand-offs whose GRANTED went with their node's link (the grant ended reason=disconnect or failover)")
            }
            if r.options.workload == .buzz {
                what.append("\(count(Double(r.rankedRepliesChecked))) RANKED replies checked against their rounds")
            }
            if r.joinsPastAGap > 0 {
                what.append("\(r.joinsPastAGap) JOINs again answered past events their node resynchronised away")
            }
        }
        if r.overlapChecked {
            what.append("\(count(Double(r.grantsChecked))) grants checked for overlap" + (r.checked ? "" : " (no observer)"))
        }
        var out: [String] = []
        if r.violationCount == 0 {
            out.append("  safety        clean: " + what.joined(separator: "; "))
            if !r.orderCounts.isEmpty {
                out.append("  panel order   " + r.orderCounts.map { "\($0.0.verb) \(count(Double($0.1)))" }.joined(separator: ", "))
            }
        } else {
            out.append("  safety        \(r.violationCount) VIOLATION" + (r.violationCount == 1 ? "" : "S") + " (" + what.joined(separator: "; ") + ")")
            out += r.violations.map(\.description)
            if r.violationCount > r.violations.count { out.append("  ... and \(r.violationCount - r.violations.count) more") }
        }
        return out
    }

    public static func json(_ r: LoadResult) -> String {
        var f: [(String, String)] = [
            ("workload", quote(r.options.workload.rawValue)), ("target", quote(r.target)),
            ("connections", "\(r.connections)"), ("websocket_connections", "\(r.webSocketConnections)"),
            ("pressers", "\(r.pressers)"), ("observers", "\(r.observers)"), ("panels", "\(r.panels)"), ("threads", "\(r.options.threads)"),
            ("buttons", "\(r.buttons)"), ("measured_s", fixed(r.measuredSeconds, 3)),
            ("ops_per_s", fixed(r.opsPerSecond, 1)), ("cycles_per_s", fixed(r.cyclesPerSecond, 1)),
            ("events_per_s", fixed(r.eventsPerSecond, 1)), ("grants", "\(r.stats.grants)"),
            ("denials", "\(r.stats.denials)"), ("errors", "\(r.stats.errors)"), ("late_ups", "\(r.stats.lateUps)"), ("rate_limited", "\(r.stats.rateLimited)"),
            ("unavailable", "\(r.stats.unavailable)"), ("failover_ups", "\(r.stats.failoverUps)"), ("lines_lost", "\(r.stats.linesLost)"),
            ("queued", "\(r.stats.queued)"), ("hand_offs", "\(r.stats.handOffs)"), ("rounds", "\(r.stats.rounds)"),
            ("ranked", "\(r.stats.ranked)"), ("early_denied", "\(r.stats.earlyDenied)"), ("abandoned_rounds", "\(r.stats.abandonedRounds)"),
            ("reconnects", "\(r.stats.reconnects)"),
            ("reply_latency_us", latencyJSON(r.stats.reply)), ("event_latency_us", latencyJSON(r.stats.event)),
        ]
        if r.options.workload == .buzz { f.append(("announce", "\(r.options.announcedPlaces)")) }
        if r.checked || r.overlapChecked {
            f.append(
                (
                    "safety",
                    "{\"clean\":\(r.violationCount == 0),\"violations\":\(r.violationCount),\"events_checked\":\(r.eventsChecked),"
                        + "\"events_compared\":\(r.eventsCompared),\"grants_checked\":\(r.grantsChecked),\"undecided_grants\":\(r.undecidedGrants),\"lost_hand_offs\":\(r.lostHandOffs),\"joins_past_a_gap\":\(r.joinsPastAGap),\"ranked_replies_checked\":\(r.rankedRepliesChecked),\"observer_free\":\(!r.checked),"
                        // The evidence too, so that a script keeping only the JSON can show why.
                        + "\"first_violations\":[\(r.violations.prefix(5).map { quote($0.description) }.joined(separator: ","))]}"
                ))
        }
        if let before = r.memoryBefore, let after = r.memoryAfter {
            f.append(("memory", "{\"before_bytes\":\(before),\"after_bytes\":\(after),\"per_connection_bytes\":\(fixed(r.memoryPerConnection ?? 0, 1))}"))
        }
        if let cpu = r.generatorCPU { f.append(("generator_cpu_s", fixed(cpu, 2))) }
        if let cpu = r.serverCPU { f.append(("server_cpu_s", fixed(cpu, 2))) }
        if r.generatorCPU != nil { f.append(("generator_bound", "\(r.isGeneratorBound)")) }
        if r.options.workload == .buzz {
            let order = r.stats.arrivals.summary(players: r.options.connectionCount)
            f.append(
                (
                    "arrival_order",
                    "{\"rounds\":\(order.rounds),\"pairs\":\(order.pairs),\"inversions\":\(order.inversions),\"winner_inversions\":\(order.winnerInversions),"
                        + "\"all_inversions\":\(order.allInversions),\"largest_inverted_gap_us\":\(order.largestInvertedGapNs / 1000),"
                        + "\"inverted_by_gap\":[\(order.invertedByGap.map(String.init).joined(separator: ","))]}"
                ))
        }
        if let failure = r.failure { f.append(("failure", quote(failure))) }
        if !r.stats.abandonSamples.isEmpty {
            f.append(("abandon_samples", "[" + r.stats.abandonSamples.map(quote).joined(separator: ",") + "]"))
        }
        if !r.stats.errorSamples.isEmpty { f.append(("error_samples", "[" + r.stats.errorSamples.map(quote).joined(separator: ",") + "]")) }
        f.append(("exit_code", "\(r.exitCode)"))
        return "{" + f.map { "\(quote($0.0)):\($0.1)" }.joined(separator: ",") + "}"
    }

    static func latency(_ h: LatencyHistogram) -> String {
        guard h.count > 0 else { return "no samples" }
        let parts = [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99.9", 0.999)].map { "\($0.0) \(ms(h.value(atFraction: $0.1)))" }
        return parts.joined(separator: "  ") + "  max \(ms(h.max))  (n=\(count(Double(h.count))))"
    }

    static func latencyJSON(_ h: LatencyHistogram) -> String {
        func us(_ v: UInt64) -> String { fixed(Double(v) / 1000, 1) }
        return "{\"count\":\(h.count),\"p50\":\(us(h.value(atFraction: 0.5))),\"p90\":\(us(h.value(atFraction: 0.9))),"
            + "\"p99\":\(us(h.value(atFraction: 0.99))),\"p999\":\(us(h.value(atFraction: 0.999))),\"max\":\(us(h.max))}"
    }

    /// Milliseconds with three significant decimals for small values.
    public static func ms(_ nanos: UInt64) -> String {
        let v = Double(nanos) / 1e6
        return (v < 10 ? fixed(v, 3) : fixed(v, 1)) + " ms"
    }

    static func percent(_ v: Double) -> String { "\(Int(v * 100 + 0.5))%" }

    static func mib(_ bytes: Int) -> String { fixed(Double(bytes) / 1_048_576, 1) + " MiB" }

    /// A whole number with thousands separators.
    public static func count(_ v: Double) -> String {
        let n = Int(v.isFinite ? v + 0.5 : 0)
        let digits = Array(String(n))
        var out = ""
        for (i, d) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(d)
        }
        return out
    }

    /// `v` with `places` decimals, without Foundation.
    public static func fixed(_ v: Double, _ places: Int) -> String {
        guard v.isFinite else { return "0" }
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let negative = v < 0
        let scaled = Int((abs(v) * scale) + 0.5)
        let whole = scaled / Int(scale)
        let fraction = scaled % Int(scale)
        var text = "\(negative ? "-" : "")\(whole)"
        if places > 0 {
            let f = String(fraction)
            text += "." + String(repeating: "0", count: places - f.count) + f
        }
        return text
    }

    static func quote(_ s: String) -> String {
        var out = "\""
        for c in s.unicodeScalars {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: if c.value < 0x20 { out += "?" } else { out.unicodeScalars.append(c) }
            }
        }
        return out + "\""
    }
}
