import ArbiterCore
import ArbiterHooks

/// The hooks' part of /metrics and the body of /api/hooks.
enum HookMetrics {
    static func write(_ hooks: HookSystem, into p: inout PrometheusText) {
        var total = HookStats()
        for runner in hooks.runners {
            let s = runner.stats.withLock { $0 }
            total.delivered += s.delivered
            total.retried += s.retried
            total.rejected += s.rejected
            total.expired += s.expired
            total.overflowed += s.overflowed
            total.pending += s.pending
            total.latency.merge(s.latency)
        }
        p.counters(
            "arbiter_hook_deliveries_total",
            "Hook deliveries by result: delivered (2xx), retried (an attempt that failed and is tried again), rejected (dropped: a 4xx no retry changes), expired (dropped after max_age_s), overflow (dropped: max_pending waiting).",
            label: "result",
            [
                ("delivered", total.delivered), ("retried", total.retried), ("rejected", total.rejected), ("expired", total.expired),
                ("overflow", total.overflowed),
            ])
        p.gauge("arbiter_hook_pending", "Hook deliveries waiting or in flight, summed over hooks.", total.pending)
        p.histogram("arbiter_hook_delivery_seconds", "Time from an event to its receiver's 2xx, retries included.", total.latency)
    }

    /// `{"hooks":[{"panel":..,"hook":0,"url":..,"pending":..,"delivered":..,"last_success":..,"last_failure":..,"last_failure_reason":..}]}`,
    /// the hooks of the panels `visible` lets through.
    static func json(_ hooks: HookSystem, visible: (String) -> Bool) -> [UInt8] {
        var out = Array(#"{"hooks":["#.utf8)
        var first = true
        for runner in hooks.runners where visible(runner.panel) {
            let s = runner.stats.withLock { $0 }
            var j = JSONObjectWriter()
            j.string("panel", runner.panel)
            j.int("hook", runner.index)
            j.string("url", runner.config.url)
            j.int("pending", s.pending)
            j.int("delivered", s.delivered)
            j.int("dropped", s.rejected + s.expired + s.overflowed)
            func time(_ key: String, _ ms: Int64?) {
                if let ms { j.string(key, RFC3339.utc(milliseconds: ms)) } else { j.raw(key, "null") }
            }
            time("last_success", s.lastSuccessWallMs)
            time("last_failure", s.lastFailureWallMs)
            if let reason = s.lastFailureReason { j.string("last_failure_reason", reason) } else { j.raw("last_failure_reason", "null") }
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            out += Array(j.finish().utf8)
        }
        out += Array("]}".utf8)
        return out
    }
}
