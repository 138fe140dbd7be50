import ArbiterIO
/// What a run needs before its engines start: each panel's buttons (from a setup
/// probe's JOIN, or made up for Redis), which of them pressers use, and the list of
/// connections to open.
struct RunSetup {
    /// Per panel: its setup probe, kept as the panel's first watching member (nil when
    /// closed after the snapshot, and for Redis and idle).
    var probes: [SetupProbe?] = []
    /// Per panel; one nil entry for idle, which reads no buttons.
    var tables: [ButtonTable?] = []
    var pressButtons: [[Int32]] = []
    var specs: [PeerSpec] = []

    var panelCount: Int { tables.count }
    var keptProbes: Int { probes.reduce(0) { $0 + ($1 == nil ? 0 : 1) } }

    static func prepare(_ o: LoadOptions) throws(LoadError) -> RunSetup {
        var s = RunSetup()
        let n = o.connectionCount
        if o.workload == .config { throw LoadError("config prints a panel; it does not run") }
        if o.workload == .idle {
            s.tables = [nil]
            s.probes = [nil]
            s.pressButtons = [[]]
            s.specs = Array(repeating: PeerSpec(role: .idler, joins: false), count: n)
            return s
        }
        if o.isRedis {
            let count = o.buttons ?? 100
            let buttons = (1...count).map { SnapshotButton(id: "b\($0)", kind: .tap, group: "g\($0)") }
            for id in o.panelIDs {
                s.tables.append(ButtonTable(panel: id, buttons: buttons))
                s.probes.append(nil)
                s.pressButtons.append((0..<count).map { Int32($0) })
            }
        } else {
            do throws(LoadError) {
                try s.probeEveryPanel(o)
            } catch {
                // Probes already open would otherwise stay connected for nothing.
                for case let probe? in s.probes { Sys.close(probe.fd) }
                throw error
            }
        }
        s.specs = specs(o, n: n, panels: s.panelCount, pressButtons: s.pressButtons.first ?? [], probeIsMember: s.keptProbes > 0)
        return s
    }

    /// JOINs every panel once: its snapshot gives the buttons. The probe stays on as the
    /// panel's first observer (or fanout member) unless no one is to watch.
    private mutating func probeEveryPanel(_ o: LoadOptions) throws(LoadError) {
        for (p, id) in o.panelIDs.enumerated() {
            let probe = try SetupProbe.join(host: o.host, port: o.port, panel: id, name: "c\(p)")
            probes.append(probe)
            let table = ButtonTable(panel: id, buttons: probe.buttons)
            tables.append(table)
            pressButtons.append(try RunSetup.pressable(o, table))
            // Without observers the probe's only job was the snapshot.
            if o.observers == 0 && o.workload != .fanout {
                Sys.close(probe.fd)
                probes[p] = nil
            }
        }
    }

    /// The buttons pressers of one panel use.
    private static func pressable(_ o: LoadOptions, _ table: ButtonTable) throws(LoadError) -> [Int32] {
        switch o.workload {
        case .contend, .fanout:
            var taps = table.buttons(ofKind: .tap)
            if let b = o.buttons { taps = Array(taps.prefix(b)) }
            guard !taps.isEmpty else { throw LoadError("panel \(table.panel) has no tap buttons to press") }
            return taps.map { Int32($0) }
        case .queue, .buzz:
            let policy: LoadGroupPolicy = o.workload == .queue ? .queue : .buzzer
            var taps = table.buttons(ofKind: .tap).filter { table.policies[table.groups[$0]] == policy }
            // One round at a time: the host arms one buzzer group, the first.
            if o.workload == .buzz, let first = taps.first { taps = taps.filter { table.groups[$0] == table.groups[first] } }
            if let b = o.buttons { taps = Array(taps.prefix(b)) }
            guard !taps.isEmpty else {
                throw LoadError(
                    "panel \(table.panel) has no tap buttons in a \(policy.rawValue) group; arbiter-load config --buttons 1 --policy \(policy.rawValue) prints one that has"
                )
            }
            return taps.map { Int32($0) }
        case .holds:
            let buttons = table.buttons(ofKind: .hold) + table.buttons(ofKind: .talk)
            guard !buttons.isEmpty else {
                throw LoadError("panel \(table.panel) has no hold or talk buttons; arbiter-load config --holds 4 --talks 4 prints one that has")
            }
            return buttons.map { Int32($0) }
        case .idle, .config:
            return []
        }
    }

    /// The connections to open besides the probes. contend spreads its pressers over the
    /// panels round-robin and gives each panel `--observers` watchers (its probe first);
    /// fanout and holds have one panel.
    private static func specs(_ o: LoadOptions, n: Int, panels: Int, pressButtons: [Int32], probeIsMember: Bool) -> [PeerSpec] {
        let extraObservers = o.isRedis ? 0 : max(0, o.observers - 1)
        var specs: [PeerSpec] = []
        switch o.workload {
        case .queue:
            specs =
                Array(repeating: PeerSpec(role: .observer, joins: true, checked: true), count: extraObservers)
                + Array(repeating: PeerSpec(role: .presser, joins: false, checked: true), count: n)
        case .buzz:
            // Players join: ARMED is their signal. The host arms, resets and tells rounds apart.
            specs =
                Array(repeating: PeerSpec(role: .observer, joins: true, checked: true), count: extraObservers)
                + [PeerSpec(role: .host, joins: true, checked: true)]
                + Array(repeating: PeerSpec(role: .player, joins: true, checked: true), count: n)
        case .contend:
            for p in 0..<panels {
                specs += Array(repeating: PeerSpec(role: .observer, joins: true, panel: p, checked: true), count: extraObservers)
            }
            // Checked too: their GRANTED replies must match the PRESSED members see.
            for k in 0..<n { specs.append(PeerSpec(role: .presser, joins: false, panel: k % panels, checked: true)) }
        case .fanout:
            for i in 0..<o.pressers {
                specs.append(PeerSpec(role: .presser, joins: false, fixedButton: pressButtons[i % pressButtons.count], checked: true))
            }
            // The setup probe is a member already: it is one of the n.
            specs += Array(repeating: PeerSpec(role: .member, joins: !o.isRedis, checked: true), count: max(0, n - (probeIsMember ? 1 : 0)))
        case .holds:
            specs =
                Array(repeating: PeerSpec(role: .observer, joins: true, checked: true), count: extraObservers)
                + Array(repeating: PeerSpec(role: .presser, joins: true, checked: true), count: n)
        case .idle, .config:
            break
        }
        return specs
    }

    /// The overlap check of a contend run: every panel's buttons numbered one after the
    /// other, each group (each Redis key) its own slot.
    func makeOverlapChecker(_ o: LoadOptions) -> OverlapChecker? {
        guard o.checksOverlap else { return nil }
        var labels: [String] = []
        var groupLabels: [String] = []
        var groups: [Int] = []
        var panels: [Int] = []
        var groupBase = 0
        for (p, table) in tables.enumerated() {
            guard let table else { continue }
            for b in 0..<table.count {
                labels.append(o.isRedis ? "lock:\(table.panel):\(table.ids[b])" : "\(table.panel) \(table.ids[b])")
                groups.append(groupBase + table.groups[b])
                panels.append(p)
            }
            groupBase += table.groupNames.count
            // Redis: one key per button, and the made-up table gives each its own group.
            groupLabels += o.isRedis ? table.ids.map { "lock:\(table.panel):\($0)" } : table.groupNames.map { "group \($0) of \(table.panel)" }
        }
        return o.isRedis
            ? OverlapChecker(labels: labels, groups: groups, panels: panels, groupLabels: groupLabels, grantWord: "+OK to SET NX", releaseWord: "DEL")
            : OverlapChecker(labels: labels, groups: groups, panels: panels, groupLabels: groupLabels)
    }
}
