import ArbiterCore
import ArbiterIO
import Dispatch
import Foundation

/// Runs one workload end to end: setup, engines on their threads, phases, report.
public enum LoadRunner {
    /// Runs `o` and returns what it measured; `onProgress` is called about once a
    /// second from the calling thread (for a live progress line).
    public static func run(_ o: LoadOptions, onProgress: ((LiveProgress) -> Void)? = nil) -> LoadResult {
        let target = o.isRedis ? "redis \(o.redisAuthority)" : "arbiter \(o.targets.map(\.authority).joined(separator: ","))"
        var result = LoadResult(options: o, target: target)
        do {
            try execute(o, &result, onProgress)
        } catch {
            result.failure = error.message
        }
        return result
    }

    private static func execute(_ o: LoadOptions, _ result: inout LoadResult, _ onProgress: ((LiveProgress) -> Void)?) throws(LoadError) {
        let setup = try RunSetup.prepare(o)
        result.buttons = setup.pressButtons.reduce(0) { $0 + $1.count }
        result.panels = setup.panelCount
        let wanted = setup.specs.count + setup.keptProbes + 64
        let limit = Sys.raiseFileLimit(to: wanted)
        guard limit >= wanted else { throw LoadError("\(setup.specs.count) connections need \(wanted) descriptors but ulimit -n is \(limit)") }
        if o.workload == .idle, let pid = o.serverPID {
            result.memoryBefore = ProcessMemory.residentBytes(pid: pid)
            guard result.memoryBefore != nil else { throw LoadError("cannot read /proc/\(pid)/status (--server-pid)") }
        }
        let threads = max(1, min(o.threads, setup.specs.count))
        let control = RunControl(
            engineCount: threads, totalPeers: setup.specs.count + setup.keptProbes,
            cycleBudget: o.cycles, warmup: o.warmup, duration: o.duration, showsProgress: onProgress != nil,
            serverPID: o.workload == .idle ? nil : o.serverPID)
        var offset = 0
        var panels: [PanelPlan] = []
        for (p, table) in setup.tables.enumerated() {
            // The event checker needs a member that watches: the panel's kept probe.
            panels.append(
                PanelPlan(
                    index: p, id: table?.panel ?? o.panel, table: table, pressButtons: setup.pressButtons[p],
                    lockTTLms: o.lockTTLms, checks: o.checks && setup.probes[p] != nil, announce: o.announcedPlaces, buttonOffset: offset))
            offset += table?.count ?? 0
        }
        let plan = RunPlan(options: o, panels: panels, control: control, overlap: setup.makeOverlapChecker(o))
        let engines = (0..<threads).map { Engine(index: $0, plan: plan) }
        for (p, probe) in setup.probes.enumerated() {
            guard let probe else { continue }
            let member = o.workload == .fanout
            let peer = engines[p % threads].add(id: p, role: member ? .member : .observer, transport: .line)
            peer.panel = p
            peer.joins = true
            peer.fd = probe.fd
            peer.state = .ready
            peer.input = probe.leftover
            peer.stream =
                plan.panels[p].checker?.withLock { c in
                    let stream = c.addStream(name: peer.name)
                    for line in probe.lines {
                        c.record(stream, line.withUnsafeBufferPointer { LineMessageParser.parse($0, 0..<$0.count, buttons: c.buttons) })
                    }
                    return stream
                } ?? -1
            control.readyPeers.wrappingAdd(1, ordering: .relaxed)
            if member { result.connections += 1 } else { result.observers += 1 }
        }
        // Ids after the probes' (c0.. per panel), so that every connection's name is unique.
        let firstID = setup.panelCount
        var ws = 0
        for (k, spec) in setup.specs.enumerated() {
            let transport: PeerTransport = o.isRedis ? .redis : (Int(Double(k + 1) * o.wsFraction) > Int(Double(k) * o.wsFraction) ? .webSocket : .line)
            let peer = engines[k % threads].add(id: firstID + k, role: spec.role, transport: transport)
            peer.panel = spec.panel
            peer.joins = spec.joins
            peer.fixedButton = spec.fixedButton
            if spec.checked {
                let name = peer.name
                peer.stream = plan.panels[spec.panel].checker?.withLock { $0.addStream(name: name) } ?? -1
            }
            switch spec.role {
            case .observer: result.observers += 1
            case .presser, .player: result.pressers += 1
            case .member, .idler, .host: break
            }
            // The connections a workload is sized by: its pressers, members or idlers.
            let isLoad =
                switch (o.workload, spec.role) {
                case (.fanout, .member), (.contend, .presser), (.holds, .presser), (.idle, .idler), (.queue, .presser), (.buzz, .player): true
                default: false
                }
            if isLoad {
                result.connections += 1
                if transport == .webSocket { ws += 1 }
            }
        }
        result.webSocketConnections = ws

        let group = DispatchGroup()
        for engine in engines {
            group.enter()
            let thread = Thread {
                engine.run()
                group.leave()
            }
            thread.name = "arbiter-load.\(engine.index)"
            thread.start()
        }
        supervise(o, control, &result, onProgress)
        group.wait()

        for engine in engines { result.stats.merge(engine.stats) }
        let from = control.measureStart.load(ordering: .acquiring)
        let to = control.measureEnd.load(ordering: .acquiring)
        result.measuredSeconds = from != .max && to > from ? Double(to - from) / 1e9 : 0
        result.failure = control.failure.withLock { $0 }
        if let start = control.cpuAtStart.withLock({ $0 }), let end = control.cpuAtEnd.withLock({ $0 }) {
            result.generatorCPU = end.0 - start.0
            result.generatorCores = max(1, min(o.threads, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
            if let a = start.1, let b = end.1 { result.serverCPU = b - a }
        }
        collectSafety(plan, &result)
    }

    /// Every panel's event checker finished and summed, and the overlap check's findings.
    private static func collectSafety(_ plan: RunPlan, _ result: inout LoadResult) {
        var order = [Int](repeating: 0, count: Int(MessageKind.unknown.rawValue) + 1)
        for panel in plan.panels {
            panel.checker?.withLock { c in
                c.finish()
                result.checked = true
                result.violations += c.violations.prefix(max(0, 50 - result.violations.count))
                result.violationCount += c.violationCount
                result.eventsChecked += c.eventsChecked
                result.eventsCompared += c.eventsCompared
                result.undecidedGrants += c.undecidedGrants
                result.lostHandOffs += c.lostHandOffs
                result.joinsPastAGap += c.joinsPastAGap
                result.rankedRepliesChecked += c.rankedRepliesChecked
                for (i, n) in c.orderCounts.enumerated() { order[i] += n }
            }
        }
        result.orderCounts = order.enumerated().compactMap { i, n in
            n > 0 ? MessageKind(rawValue: UInt8(i)).map { ($0, n) } : nil
        }
        if let overlap = plan.overlap {
            result.overlapChecked = true
            result.grantsChecked = overlap.grantsChecked
            result.violations += overlap.violations.prefix(max(0, 50 - result.violations.count))
            result.violationCount += overlap.violationCount
        }
    }

    /// Watches the phases from the calling thread: measures idle memory, enforces
    /// time limits, reports progress.
    private static func supervise(_ o: LoadOptions, _ control: RunControl, _ result: inout LoadResult, _ onProgress: ((LiveProgress) -> Void)?) {
        let start = LoadClock.now()
        var lastPhase = control.phase
        var phaseStart = start
        var lastTick = start
        var lastReplies = 0
        var lastEvents = 0
        var idleMeasured = false
        // Bounded by the phase time limits below; each turn waits up to 250 ms.
        while true {
            let phase = control.phase
            let now = LoadClock.now()
            if phase != lastPhase {
                lastPhase = phase
                phaseStart = now
            }

            if phase == .done || phase == .aborted { break }
            if o.workload == .idle, phase == .running, !idleMeasured {
                // Every connection has its WELCOME (or PONG): the server holds them all.
                idleMeasured = true
                if let pid = o.serverPID { result.memoryAfter = ProcessMemory.residentBytes(pid: pid) }
                control.advance(from: .running, to: .draining)
            }
            let limitSeconds: UInt64 =
                switch phase {
                case .connecting: 300
                case .running: UInt64(o.warmup + o.duration) + 600
                default: 60
                }
            if now - phaseStart > limitSeconds * LoadClock.second {
                let ready = control.readyPeers.load(ordering: .relaxed)
                control.abort("\(phase) did not finish within \(limitSeconds) s (\(ready) of \(control.totalPeers) connections ready)")
            }
            if let onProgress, now - lastTick >= LoadClock.second {
                let slots = control.progress.withLock { slots -> [ProgressSlot] in
                    let copy = slots
                    for i in slots.indices { slots[i].interval = LatencyHistogram() }
                    return copy
                }
                var interval = LatencyHistogram()
                var replies = 0
                var events = 0
                var errors = 0
                for s in slots {
                    interval.merge(s.interval)
                    replies += s.replies
                    events += s.events
                    errors += s.errors
                }
                let seconds = Double(now - lastTick) / 1e9
                onProgress(
                    LiveProgress(
                        elapsed: Double(now - start) / 1e9, phase: "\(phase)",
                        opsPerSecond: Double(max(0, replies - lastReplies)) / seconds,
                        eventsPerSecond: Double(max(0, events - lastEvents)) / seconds,
                        p99: interval.value(atFraction: 0.99), errors: errors,
                        ready: control.readyPeers.load(ordering: .relaxed), total: control.totalPeers))
                lastTick = now
                lastReplies = replies
                lastEvents = events
            }
            _ = control.wake.wait(timeout: .now() + .milliseconds(250))
        }
    }
}
