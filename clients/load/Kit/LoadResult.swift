/// Everything a run measured and found.
public struct LoadResult: Sendable {
    public var options: LoadOptions
    /// `arbiter 127.0.0.1:7070` or `redis 127.0.0.1:6379`.
    public var target: String
    /// Load connections (pressers, members or idlers), of which WebSocket peers.
    public var connections = 0
    public var webSocketConnections = 0
    public var pressers = 0
    public var observers = 0
    /// Buttons pressed, over all panels.
    public var buttons = 0
    public var panels = 1
    public var measuredSeconds = 0.0
    public var stats = RunStats()
    /// Why the run stopped early, if it did.
    public var failure: String?
    /// The event checker ran (a member watched at least one panel).
    public var checked = false
    /// The observer-free overlap check ran (contend), and how many grants it checked.
    public var overlapChecked = false
    public var grantsChecked = 0
    /// Both checkers' violations (the first 50 kept) and their count.
    public var violations: [Violation] = []
    public var violationCount = 0
    public var eventsChecked = 0
    public var eventsCompared = 0
    /// Grants whose GRANTED never came, each accounted for by an answer that said the
    /// command "may or may not have been done" (cluster mode, a leader dying mid-reply).
    public var undecidedGrants = 0
    public var lostHandOffs = 0
    /// Cluster mode: JOINs again answered past a gap the member's node resynchronised.
    public var joinsPastAGap = 0
    /// buzz: players' RANKED replies the checker placed in their rounds.
    public var rankedRepliesChecked = 0
    /// The panel's total order by event kind, as the checker rebuilt it.
    public var orderCounts: [(MessageKind, Int)] = []
    /// Server VmRSS (bytes) before and after the idle connections were greeted.
    public var memoryBefore: Int?
    public var memoryAfter: Int?
    /// CPU seconds used during the measured window by the generator and (with
    /// --server-pid) by the server.
    public var generatorCPU: Double?
    public var serverCPU: Double?
    /// Cores the generator's threads can keep busy: its threads, at most the machine's.
    public var generatorCores: Int

    public init(options: LoadOptions, target: String) {
        self.options = options
        self.target = target
        self.generatorCores = options.threads
    }

    /// The generator kept its cores at least 90% busy over the measured window: it, not
    /// the server, may have set the pace, so the figures are a lower bound.
    public var isGeneratorBound: Bool {
        guard let cpu = generatorCPU, measuredSeconds > 0 else { return false }
        return cpu / measuredSeconds >= 0.9 * Double(max(1, generatorCores))
    }

    /// Connections of one panel that receive its events, and so feed the checker's
    /// comparison across members: observers, plus the pressers of holds or the members
    /// of fanout (contend's pressers do not JOIN).
    public var eventReadersPerPanel: Int {
        switch options.workload {
        case .contend, .queue: options.observers
        case .holds, .buzz: options.observers + connections
        case .fanout: connections
        case .idle, .config: 0
        }
    }

    private func perSecond(_ n: Int) -> Double { measuredSeconds > 0 ? Double(n) / measuredSeconds : 0 }

    /// Replies to timed requests per second.
    public var opsPerSecond: Double { perSecond(stats.replies) }
    /// Completed cycles per second: DOWN granted and UP answered (Redis: SET NX won
    /// and DEL answered; fanout: PUBLISH answered).
    public var cyclesPerSecond: Double { perSecond(stats.cycles) }
    /// Events (pub/sub messages) read by all members per second.
    public var eventsPerSecond: Double { perSecond(stats.events) }

    public var memoryPerConnection: Double? {
        guard let before = memoryBefore, let after = memoryAfter, connections > 0 else { return nil }
        return Double(after - before) / Double(connections)
    }

    /// 0 clean; 1 a safety violation; 2 the run failed; 3 the server answered errors.
    public var exitCode: Int32 {
        if violationCount > 0 { return 1 }
        if failure != nil { return 2 }
        if stats.errors > 0 { return 3 }
        return 0
    }
}
