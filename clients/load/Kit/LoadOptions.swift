import ArbiterCore
import ArbiterIO
/// Everything `arbiter-load` is started with. Defaults are the documented ones; a nil
/// count means "the workload's default" (see `connectionCount`).
public struct LoadOptions: Sendable, Equatable {
    public var workload: Workload = .contend
    /// Server address; default 127.0.0.1:7070.
    public var host = "127.0.0.1"
    public var port: UInt16 = 7070
    /// `--hosts`: several nodes of one cluster; connection i goes to node i mod N, and a
    /// connection whose node goes away reconnects to the next one and goes on. Empty:
    /// `host:port` alone (then a lost connection ends the run, as before).
    public var hosts: [LoadHost] = []
    /// `--redis HOST:PORT`: run the equivalent workload against Redis instead.
    public var redisHost: String?
    public var redisPort: UInt16 = 6379
    /// The panel under load; default `load` (see `arbiter-load config`).
    public var panel = "load"
    /// contend and config: N independent panels `<panel>1..<panel>N` (default 1: the
    /// one panel `<panel>`). Connections are spread over them round-robin.
    public var panels = 1
    /// Load connections: pressers (contend, holds), members (fanout), all (idle).
    public var connections: Int?
    /// Buttons used: contend picks among the first B tap buttons (default all);
    /// fanout pressers use one each. Redis mode has no panel: default 100 keys.
    public var buttons: Int?
    /// fanout: pressers (not members). Default 1.
    public var pressers = 1
    /// contend and holds: members that only watch, per panel. Default 1.
    public var observers = 1
    /// Share of connections that are WebSocket peers (JSON form). Default 0.
    public var wsFraction = 0.0
    /// Measured seconds (after the warm-up). Default 5.
    public var duration = 5.0
    /// Seconds run before measuring starts. Default 0.
    public var warmup = 0.0
    /// Stop after this many press cycles in all (tests), instead of the duration.
    public var cycles: Int?
    /// Generator threads, each with its own epoll set. Default 1.
    public var threads = 1
    public var seed: UInt64 = 1
    /// `--server-pid`: read the server's VmRSS before and after (idle).
    public var serverPID: Int32?
    public var json = false
    /// Skip the safety checker (it is on by default).
    public var noCheck = false
    /// holds: a granted press is released after a uniform random 0...this (ms).
    public var maxHoldMs = 400
    /// Connects in flight at once; keeps the server's accept backlog from overflowing.
    public var connectBatch = 256
    /// Redis contend: the lock's PX expiry in ms.
    public var lockTTLms = 10_000
    // `config` only: the panel to print.
    public var holdButtons = 0
    public var talkButtons = 0
    public var groups: Int?
    public var holdMs = 200
    public var longMs = 100
    public var minTalkMs = 50
    /// `config --policy queue|buzzer`: every tap group gets this policy.
    public var policy: String?
    public var maxQueue = 100_000
    public var earlyLockoutMs = 20
    /// `--announce`: the places of a buzzer group that members are told (`announce` in
    /// the config `config` prints; buzz: what the checker holds the group to). nil: the
    /// server's default.
    public var announce: Int?
    public var showHelp = false

    public init() {}

    public var isRedis: Bool { redisHost != nil }

    /// The buzzer group's `announce` the run assumes: `--announce`, or the server's default.
    public var announcedPlaces: Int { announce ?? GroupPolicy.defaultAnnounce }

    /// The nodes connections are spread over: `--hosts`, or `host:port` alone.
    public var targets: [LoadHost] { hosts.isEmpty ? [LoadHost(host: host, port: port)] : hosts }

    /// `host:port` of the arbiter, IPv6 in brackets, for messages.
    public var serverAuthority: String { HostLiteral.authority(host, port: port) }
    /// `host:port` of Redis, IPv6 in brackets, for messages.
    public var redisAuthority: String { HostLiteral.authority(redisHost ?? "", port: redisPort) }

    /// The number of load connections for the workload.
    public var connectionCount: Int {
        if let connections { return connections }
        switch workload {
        case .contend, .holds, .queue, .buzz: return 10
        case .fanout: return 100
        case .idle: return 1000
        case .config: return 0
        }
    }

    /// The ids of the panels under load: `panel` alone, or `panel1...panelN`.
    public var panelIDs: [String] {
        panels <= 1 ? [panel] : (1...panels).map { "\(panel)\($0)" }
    }

    /// Whether the event checker runs (arbiter workloads with a panel; it also needs
    /// a member that watches, see `RunSetup`).
    public var checks: Bool {
        !noCheck && !isRedis && workload != .idle && workload != .config
    }

    /// Whether the observer-free exclusivity check runs: contend, arbiter or Redis.
    public var checksOverlap: Bool {
        !noCheck && workload == .contend
    }
}
