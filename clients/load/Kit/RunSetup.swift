/// What a run needs before its engines start: the panel's buttons (from the setup
/// probe's JOIN, or made up for Redis), which of them pressers use, and the list of
/// connections to open.
struct RunSetup {
    var probe: SetupProbe?
    var table: ButtonTable?
    var pressButtons: [Int32] = []
    var buttonNames: [String] = []
    var specs: [PeerSpec] = []

    static func prepare(_ o: LoadOptions) throws(LoadError) -> RunSetup {
        var s = RunSetup()
        let n = o.connectionCount
        if o.workload == .config { throw LoadError("config prints a panel; it does not run") }
        if o.workload == .idle {
            s.specs = Array(repeating: PeerSpec(role: .idler, joins: false), count: n)
            return s
        }
        if o.isRedis {
            let count = o.buttons ?? 100
            let buttons = (1...count).map { SnapshotButton(id: "b\($0)", kind: .tap, group: "g\($0)") }
            s.table = ButtonTable(panel: o.panel, buttons: buttons)
            s.buttonNames = buttons.map(\.id)
            s.pressButtons = (0..<count).map { Int32($0) }
        } else {
            let probe = try SetupProbe.join(host: o.host, port: o.port, panel: o.panel, name: "c0")
            let table = ButtonTable(panel: o.panel, buttons: probe.buttons)
            s.table = table
            s.buttonNames = table.ids
            s.probe = probe
            switch o.workload {
            case .contend, .fanout:
                var taps = table.buttons(ofKind: .tap)
                if let b = o.buttons { taps = Array(taps.prefix(b)) }
                guard !taps.isEmpty else { throw LoadError("panel \(o.panel) has no tap buttons to press") }
                s.pressButtons = taps.map { Int32($0) }
            case .holds:
                let buttons = table.buttons(ofKind: .hold) + table.buttons(ofKind: .talk)
                guard !buttons.isEmpty else {
                    throw LoadError("panel \(o.panel) has no hold or talk buttons; arbiter-load config --holds 4 --talks 4 prints one that has")
                }
                s.pressButtons = buttons.map { Int32($0) }
            case .idle, .config:
                break
            }
            // Without observers the probe's only job was the snapshot.
            if o.observers == 0 && o.workload != .fanout {
                ClientSocket.close(probe.fd)
                s.probe = nil
            }
        }
        let extraObservers = o.isRedis ? 0 : max(0, o.observers - 1)
        switch o.workload {
        case .contend:
            s.specs = Array(repeating: PeerSpec(role: .observer, joins: true, checked: true), count: extraObservers)
                // Checked too: their GRANTED replies must match the PRESSED members see.
                + Array(repeating: PeerSpec(role: .presser, joins: false, checked: true), count: n)
        case .fanout:
            for i in 0..<o.pressers {
                s.specs.append(PeerSpec(role: .presser, joins: false, fixedButton: s.pressButtons[i % s.pressButtons.count], checked: true))
            }
            // The setup probe is a member already: it is one of the n.
            let probeIsMember = s.probe == nil ? 0 : 1
            s.specs += Array(repeating: PeerSpec(role: .member, joins: !o.isRedis, checked: true), count: max(0, n - probeIsMember))
        case .holds:
            s.specs = Array(repeating: PeerSpec(role: .observer, joins: true, checked: true), count: extraObservers)
                + Array(repeating: PeerSpec(role: .presser, joins: true, checked: true), count: n)
        case .idle, .config:
            break
        }
        return s
    }

    /// The safety checker with a stream for the probe and each checked connection,
    /// and the probe's lines already recorded.
    func makeChecker(_ o: LoadOptions) -> (checker: SafetyChecker?, probeStream: Int, streams: [Int]) {
        guard o.checks, let table, let probe = self.probe else {
            return (nil, -1, Array(repeating: -1, count: specs.count))
        }
        let checker = SafetyChecker(buttons: table)
        let probeStream = checker.addStream(name: "c0")
        for line in probe.lines {
            let m = line.withUnsafeBufferPointer { LineMessageParser.parse($0, 0..<$0.count, buttons: table) }
            checker.record(probeStream, m)
        }
        let streams = specs.enumerated().map { k, spec in spec.checked ? checker.addStream(name: "c\(k + 1)") : -1 }
        return (checker, probeStream, streams)
    }
}
