import ArbiterCore
import ArbiterHooks
import ArbiterIO
import ArbiterJournal
import ArbiterWire
import Dispatch
import Glibc
import Synchronization

/// What every queue of a running server shares. Immutable after `start`, apart from
/// the fields that say what guards them.
package final class ServerState: @unchecked Sendable {
    let configuration: ServerConfiguration
    let log: ServerLog
    let panels: [PanelHost]
    let panelsByID: IDTable<PanelHost>
    /// Set once before the listener opens.
    private(set) var reactors: [Reactor] = []
    /// How far the reactors have read (`ReadWatermark`), where buzzer presses are ranked
    /// by their kernel stamps on a single node; set with `reactors`.
    private(set) var readWatermark: ReadWatermark?
    let metrics = Metrics()
    /// Open connections by session, for KICK.
    let registry: Locked<[SessionID: Connection]>
    /// Unsent output of all connections together.
    let outputBudget: OutputBudget
    /// Wrong keys per client address, across its connections.
    let keyBudget: Locked<KeyFailureBudget>
    /// The names open sessions go by, each used once.
    let names = NameRegistry()
    private let nextSession: Atomic<Int>
    /// Cluster mode's glue; nil on a single node.
    let cluster: (any ServerCluster)?
    /// The journal's highest reserved fence per panel, which cluster mode seeds etcd with.
    let journalFences: [String: UInt64]
    /// Whether any panel has keys at all: if none, every session is admin everywhere.
    let hasKeys: Bool
    /// The limits every connection's state machine decides by.
    let connectionLimits: ConnectionLimits

    let journal: Journal?
    /// The panels' webhooks; nil when no panel has one.
    let hooks: HookSystem?
    /// The Host and Origin values served (DNS rebinding, cross-site WebSockets).
    let hostPolicy: HostPolicy
    private let shuttingDownFlag = Atomic<Bool>(false)

    /// The clock every decision reads: the system's, or a manual one in tests.
    let clock: any TimeSource
    /// Whether reactors stamp client sockets with the kernel's receive time
    /// (`ServerConfiguration.arrivalStamps`): a stamp is on the system clock, not a test's.
    let stampsArrivals: Bool

    init(configuration given: ServerConfiguration, clock: any TimeSource = SystemClock.monotonic) throws {
        var configuration = given
        self.clock = clock
        let log = ServerLog(level: configuration.logLevel, sink: configuration.logSink)
        self.log = log
        var loaded = JournalLoader.Loaded()
        if let path = configuration.journalPath {
            // Locked before it is read: the loader may cut a torn line off.
            let lock = try JournalLock(journalPath: path)
            loaded = try JournalLoader.load(path: path, keep: Request.maxHistoryCount)
            for warning in loaded.warnings { log.warning(warning) }
            journal = try Journal(
                path: path, syncRecords: configuration.journalSync, maxBytes: configuration.journalMaxBytes,
                keep: Request.maxHistoryCount, loaded: loaded, log: log,
                io: configuration.journalIO, retryIntervalMs: configuration.journalRetryMs, lock: lock)
            log.info(
                "journal opened",
                [
                    "path": path, "records": "\(loaded.records)",
                    "fences": loaded.lastFences.map { "\($0.key):\($0.value)" }.sorted().joined(separator: ","),
                ])
        } else {
            journal = nil
        }
        let registry = Locked<[SessionID: Connection]>([:])
        self.registry = registry
        self.journalFences = loaded.lastFences
        let cluster = configuration.cluster.map { $0.makeCluster(log: log, idleSpinNs: configuration.idleSpinNs) }
        self.cluster = cluster
        if let cluster, configuration.relayHandOff == nil {
            // Other nodes' relay links arrive on the normal port.
            configuration.relayHandOff = { fd, peer, firstBytes in cluster.adoptRelay(fd: fd, peer: peer, firstBytes: firstBytes) }
        }
        self.configuration = configuration
        // In cluster mode a session's number tells which node it is on (ClusterSetup).
        nextSession = Atomic<Int>((cluster?.sessionBase ?? 0) + 1)
        let hasKeys = configuration.panels.contains { $0.keys != PanelKeys() }
        // In cluster mode fences come from etcd: the journal only seeds them at start.
        let panelJournal = cluster == nil ? journal : nil
        let hosts = configuration.panels.enumerated().map { i, panel in
            PanelHost(
                index: i, config: panel, lastFence: cluster == nil ? loaded.grantedFences[panel.id] ?? 0 : 0,
                reservedFence: cluster == nil ? loaded.lastFences[panel.id] ?? 0 : 0, history: loaded.history[panel.id] ?? [], journal: panelJournal,
                clock: clock, sessions: registry, hasKeys: hasKeys)
        }
        // In cluster mode the pending deliveries are kept in etcd, not beside the journal:
        // the panel's next leader, on whatever node, finishes them.
        let hookSystem = try HookSystem.make(
            panels: configuration.panels, journalPath: cluster == nil ? configuration.journalPath : nil, persistence: cluster?.hookPersistence,
            clock: clock, log: HookLog(log))
        for host in hosts { host.hooks = hookSystem?.panels[host.config.id] }
        self.hooks = hookSystem
        self.panels = hosts
        let buzzers = configuration.panels.contains { $0.groups.values.contains { if case .buzzer = $0 { true } else { false } } }
        stampsArrivals = configuration.arrivalStamps ?? (buzzers && clock === SystemClock.monotonic)
        self.panelsByID = IDTable(hosts.map { ($0.config.id, $0) })
        self.hasKeys = hasKeys
        self.connectionLimits = ConnectionLimits(configuration)
        self.outputBudget = OutputBudget(limit: configuration.maxTotalOutboundBytes)
        self.keyBudget = Locked(KeyFailureBudget(policy: configuration.keyFailures))
        let wildcard = configuration.host == "0.0.0.0" || configuration.host == "::"
        self.hostPolicy = HostPolicy(
            listenHost: configuration.host, machineNames: wildcard ? Sys.machineNames() : [],
            allowedHosts: configuration.allowedHosts, allowedOrigins: configuration.allowedOrigins)
        cluster?.attach(hosts, kick: kickForAnotherNode())
    }

    var isShuttingDown: Bool { shuttingDownFlag.load(ordering: .relaxed) }

    func beginShutdown() { shuttingDownFlag.store(true, ordering: .relaxed) }

    func makeReactors() throws(Sys.Failure) {
        let count =
            configuration.reactorCount > 0
            ? configuration.reactorCount
            : max(1, min(System.coreCount, configuration.panels.count))
        if stampsArrivals, cluster == nil { readWatermark = try ReadWatermark(loops: count) }
        var made: [Reactor] = []
        for i in 0..<count { made.append(try Reactor(index: i, server: self)) }
        reactors = made
        for panel in panels { panel.start(reads: readWatermark) }
    }

    /// A socket was accepted: number its session and hand it to a reactor.
    @discardableResult
    func adopt(fd: Int32, peer: String, sink: EmbeddedSink? = nil) -> Connection {
        let number = nextSession.wrappingAdd(1, ordering: .relaxed).oldValue
        let reactor = reactors[number % reactors.count]
        // Accepts run on one queue only, so the count cannot grow between here and the
        // registration below (closes elsewhere may only lower it).
        let open = registry.withLock { $0.count } + 1
        let admission: Admission =
            open <= configuration.maxConnections
            ? .served
            : open <= configuration.maxConnections + configuration.monitoringReserve ? .overCapacity : .pastReserve
        let connection = Connection(
            session: SessionID(number), fd: fd, peer: peer, reactor: reactor, acceptedAt: clock.now(),
            admission: admission, limits: connectionLimits,
            outboundLimit: configuration.maxOutboundBytes, outputBudget: outputBudget, sink: sink)
        connection.name = names.claim(connection.name, for: connection.session, from: connection.address, replacing: nil)
        connection.tokens = Double(configuration.commandBurst)
        connection.tokensAt = clock.nanoseconds()
        registry.withLock { $0[connection.session] = connection }
        if admission != .served { metrics.add(.serverFull) }
        metrics.add(.connectionsOpened)
        log.info("connection opened", ["session": connection.session.description, "peer": peer])
        // The accepting reactor's own drain loop would hold a block back until it goes
        // quiet; registering in place lets the first request be read in this round.
        if reactor.isCurrent {
            reactor.register(connection)
        } else {
            reactor.queue.async { reactor.register(connection) }
        }
        return connection
    }

    func connectionClosed(_ connection: Connection, reason: String) {
        registry.withLock { _ = $0.removeValue(forKey: connection.session) }
        names.release(connection.name, of: connection.session)
        metrics.add(.connectionsClosed)
        // On the connection's reactor queue, which owns `kind` and `name`. An HTTP peer
        // has no session name worth logging; the others go by the name they last chose.
        let kind = connection.machine.kind
        if kind == .line || kind == .websocket {
            log.info(
                "connection closed",
                [
                    "session": connection.session.description, "peer": connection.peer, "kind": kind.rawValue,
                    "name": connection.name, "reason": reason,
                ])
        } else {
            log.info(
                "connection closed",
                [
                    "session": connection.session.description, "peer": connection.peer, "kind": kind.rawValue,
                    "reason": reason,
                ])
        }
    }

    func connection(_ session: SessionID) -> Connection? {
        registry.withLock { $0[session] }
    }

    /// A scanned press on a known panel and button, looked up to indexes; nil otherwise
    /// (the line then takes the general path, errors included).
    func resolvePress(_ press: Press<UnsafeBufferPointer<UInt8>>) -> Press<Int>? {
        guard let host = panelsByID[bytes: press.panel], let button = host.buttonIndex[bytes: press.button] else { return nil }
        return press.resolved(panel: host.index, button: button)
    }

    enum KeyCheck {
        case recognized
        /// Matches no panel; counted against the address and the server-wide ceiling.
        case wrong
        /// Not looked at: the address is locked out for this many more milliseconds.
        case lockedOut(Int64)
        /// Not looked at: the whole server took its ceiling of wrong keys, for this many
        /// more milliseconds.
        case ceilingReached(Int64)

        /// Why the key was not looked at and for how many whole seconds more; nil if it was.
        var notChecked: (why: String, seconds: Int64)? {
            switch self {
            case .lockedOut(let ms): ("too many wrong keys from your address", (ms + 999) / 1000)
            case .ceilingReached(let ms): ("too many wrong keys from many addresses at once", (ms + 999) / 1000)
            case .recognized, .wrong: nil
            }
        }
    }

    /// Checks a key presented from `peer` against the address's budget, the server-wide
    /// ceiling and the panels, in one step under the budget's lock, so parallel guesses
    /// cannot slip past either.
    func checkKey(_ key: String, peer: String) -> KeyCheck {
        let address = KeyFailureBudget.address(ofPeer: peer)
        let now = clock.now().milliseconds
        var lockout: Int64?
        var warnCeiling = false
        let check = keyBudget.withLock { budget -> KeyCheck in
            switch budget.check(address, now: now) {
            case .lockedOut(let remaining):
                return .lockedOut(remaining)
            case .ceilingReached(let remaining):
                warnCeiling = budget.takeCeilingWarning(now: now)
                return .ceilingReached(remaining)
            case .allowed:
                break
            }
            if configuration.panels.contains(where: { $0.keys.recognizes(key) }) { return .recognized }
            lockout = budget.recordFailure(address, now: now)
            return .wrong
        }
        switch check {
        case .lockedOut: metrics.add(.keyLockedOut)
        case .ceilingReached: metrics.add(.keyCeilingRefused)
        case .wrong: metrics.add(.keyFailures)
        case .recognized: break
        }
        if let lockout {
            log.warning("wrong keys: address locked out", ["address": KeyFailureBudget.client(ofAddress: address), "ms": "\(lockout)"])
        }
        if warnCeiling {
            log.warning(
                "wrong keys: server-wide ceiling reached, no key is checked until it refills",
                ["address": address, "per_second": "\(configuration.keyFailures.ceilingPerSecond)"])
        }
        return check
    }

    /// The access a session presenting `key` has on `panel`.
    @inline(__always)
    func access(key: String?, on panel: PanelConfig) -> Access {
        panel.access(forKey: key, serverHasKeys: hasKeys)
    }
}

/// Facts about the machine.
enum System {
    static var coreCount: Int {
        Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    }
}
