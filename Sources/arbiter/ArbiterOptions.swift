import ArbiterCLI
import ArbiterCluster
import ArbiterEtcd
import ArbiterIO
import ArbiterServer
import ArbiterWire
import CSystem

/// The `arbiter` command line, parsed without running anything.
public struct ArbiterOptions: Equatable, Sendable {
    public var host = "127.0.0.1"
    public var port: UInt16 = 7070
    public var configPath: String?
    public var logLevel: LogLevel = .info
    public var webSocketEcho = false
    /// Serve panels without an admin key beyond loopback (protected mode off).
    public var openAdmin = false
    /// `--no-arrival-stamps`: buzzer presses ranked by read time (`arrivalStamps`).
    public var arrivalStamps = true
    public var showHelp = false
    public var showVersion = false
    /// Limits and journal, applied onto `ServerConfiguration` (defaults there).
    public var maxConnections: Int?
    public var commandsPerSecond: Int?
    public var commandBurst: Int?
    public var idleTimeoutSeconds: Int?
    public var maxLineBytes: Int?
    public var maxWebSocketMessageBytes: Int?
    public var maxOutboundBytes: Int?
    public var headTimeoutSeconds: Int?
    public var journalPath: String?
    public var journalSync = false
    public var journalMaxBytes: Int?
    public var reactors: Int?
    public var allowedHosts: [String] = []
    public var allowedOrigins: [String] = []
    public var backlog: Int?
    public var keyFailures: Int?
    /// `--key-failure-rate <n>`: wrong keys per second the whole server takes.
    public var keyFailureRate: Int?
    public var maxTotalOutboundBytes: Int?
    /// `--idle-spin <us>`: how long idle threads look before they block (`IdleSpin`).
    public var idleSpinMicroseconds: Int?
    /// Cluster mode (docs/CLUSTER.md): etcd's endpoints, and with them the node's name,
    /// its advertised address, the key file and the lease TTL. Nil: a single node.
    public var clusterEndpoints: [EtcdEndpoint]?
    public var node: String?
    public var advertise: String?
    public var clusterKeyPath: String?
    public var clusterTTLSeconds: Int64 = 3
    /// `--no-advertise-check`: skip the start-up check that `--advertise` reaches this node.
    public var checksAdvertise = true

    /// The server configuration these options describe (panels aside).
    public func apply(to c: inout ServerConfiguration) {
        c.host = host
        c.port = port
        c.logLevel = logLevel
        c.webSocketEcho = webSocketEcho
        if let v = maxConnections { c.maxConnections = v }
        if let v = commandsPerSecond { c.commandsPerSecond = v }
        if let v = commandBurst { c.commandBurst = v }
        if let v = idleTimeoutSeconds { c.idleTimeoutMs = Int64(v) * 1000 }
        if let v = maxLineBytes { c.maxLineBytes = v }
        if let v = maxWebSocketMessageBytes { c.maxWebSocketMessageBytes = v }
        if let v = maxOutboundBytes { c.maxOutboundBytes = v }
        if let v = headTimeoutSeconds { c.headTimeoutMs = Int64(v) * 1000 }
        if let v = reactors { c.reactorCount = v }
        c.journalPath = journalPath
        c.journalSync = journalSync
        if let v = journalMaxBytes { c.journalMaxBytes = v }
        if let v = backlog { c.listenBacklog = v }
        if let v = keyFailures { c.keyFailures.allowance = v }
        if let v = keyFailureRate { c.keyFailures.ceilingPerSecond = v }
        if let v = maxTotalOutboundBytes { c.maxTotalOutboundBytes = v }
        if let v = idleSpinMicroseconds { c.idleSpinNs = Int64(v) * 1000 }
        if !arrivalStamps { c.arrivalStamps = false }
        c.allowedHosts += allowedHosts
        c.allowedOrigins += allowedOrigins
    }

    public init() {}

    public static let help = """
        OVERVIEW: ButtonArbiter - shared virtual button panels for netcat, scripts and browsers.

        Many people press the same buttons at once; the server decides who holds what and
        tells every member of the panel, in one order.

        USAGE: arbiter [--host <host>] [--port <port>] [--config <file>] [--journal <file>] [options]

        OPTIONS:
          --host <host>         Address to listen on (default: 127.0.0.1; 0.0.0.0 serves a LAN,
                                :: serves it over IPv6 and IPv4, ::1 is IPv6 loopback). Beyond
                                loopback every panel needs keys.admin, or --open-admin.
          --port <port>         TCP port (default: 7070; 0 picks a free one).
          --config <file>       JSON panel configuration (default: the embedded panel "demo").
          --open-admin          Listen beyond loopback even though some panel has no admin
                                key, so anyone who can connect may RESET and KICK (default:
                                off: such a --host is refused at start, exit 78).
          --log-level <level>   debug, info, warn, error or off (default: info).
          --journal <file>      Append every grant, fire and release to <file>; fences continue
                                above it after a restart, also after kill -9 (default: none).
          --journal-sync        fsync journal records before the replies they belong to
                                (default: off; fence reservations are always fsync'd).
          --journal-max-bytes <bytes>
                                Compact the journal to each panel's highest fence and last
                                1000 records when it grows past this (default: 67108864;
                                0: only at start).
          --max-connections <n> Open connections at most (default: 15000); past it, line peers
                                get ERROR server-full and HTTP peers 503, except /healthz and
                                /metrics, answered on 16 more connections kept for monitoring.
          --rate <n>            Commands per second per session, 0 = unlimited (default: 1000).
          --burst <n>           Commands a session may send at once: the bucket that --rate
                                refills (default: 2000).
          --idle-timeout <s>    Close line peers silent for <s> seconds, 0 = never (default: 0).
          --max-line <bytes>    Longest text line (default: 4096).
          --max-ws-message <bytes>
                                Largest WebSocket message (default: 65536).
          --max-outbound <bytes>
                                Unsent output before a peer is cut off as not reading
                                (default: 1048576).
          --max-total-outbound <bytes>
                                Unsent output of all peers together; past it the peers with
                                the largest backlog are cut off first (default: 268435456).
          --head-timeout <s>    Time allowed for an HTTP request head (default: 10).
          --key-failures <n>    Wrong keys one client address may present (over all its
                                connections) before each further one locks it out of
                                presenting keys for 1 s, 2 s, 4 s ... up to 5 min; 0 = off
                                (default: 5). IPv6 addresses count per /64.
          --key-failure-rate <n>
                                Wrong keys per second the whole server takes, from all
                                addresses together; past it no key is checked until it
                                refills (ERROR rate-limited, 429); 0 = off (default: 50).
          --backlog <n>         Listen backlog: connections the kernel holds until they are
                                accepted (default: the system maximum, net.core.somaxconn).
          --idle-spin <us>      How long a thread that ran out of work keeps looking for more
                                before it sleeps, at most; adaptive, and it yields the CPU to
                                any other work (default: 0, off; e.g. 200). Cuts latency where
                                waking a sleeping CPU is slow (VMs), at the cost of CPU time.
          --reactors <n>        Threads reading sockets (default: one per core, at most one
                                per panel).
          --no-arrival-stamps   Rank buzzer presses by when their socket was read, not by the
                                kernel's receive stamp (to compare; the stamp is the default).
          --allow-host <name>   Also answer HTTP requests whose Host is <name> (repeatable),
                                e.g. the name a reverse proxy or DNS gives the server. Loopback,
                                the listen address and, on 0.0.0.0/::, the machine's addresses
                                and host name are always allowed; other Hosts get 421.
          --allow-origin <origin>
                                Let pages from <origin> (e.g. https://panel.example.org) open
                                WebSockets (repeatable). The server's own origin is always
                                allowed; other origins get 403; clients without Origin are
                                not affected.
          --ws-echo             Also serve /ws?echo=1, an echo endpoint on the same WebSocket
                                code, for conformance suites such as Autobahn (default: off).
          --cluster <urls>      Cluster mode: several nodes share the panels through etcd
                                (comma-separated client URLs, e.g.
                                http://10.0.0.1:2379,http://10.0.0.2:2379). Needs --node,
                                --advertise and --cluster-key; see docs/GUIDE.md.
          --node <name>         This node's name in the cluster ([A-Za-z0-9._-]{1,64}, unique).
          --advertise <host:port>
                                How other nodes and kiosks reach this node's port. Checked
                                at start: a node whose address leads elsewhere is refused.
          --no-advertise-check  Skip that check (this machine cannot reach its own
                                advertised address, e.g. a NAT without hairpin).
          --cluster-key <file>  The secret every node shares (relay handshakes, panel keys in
                                etcd): at least 16 random bytes, not readable by group
                                or others.
          --cluster-ttl <s>     Lease TTL: a dead node's panels move after about this long
                                (default: 3).
          --version             Print the version and the protocol version.
          -h, --help            Show help information.

        EXAMPLES:
          arbiter                          serve the demo panel on 127.0.0.1:7070
          arbiter --host 0.0.0.0 --config hall.json    (every panel of hall.json sets keys.admin)
          nc localhost 7070                then type HELP

        EXIT STATUS: 0 after a clean shutdown (SIGINT/SIGTERM), 64 for a bad command line,
        78 for a bad configuration (or a panel without an admin key beyond loopback, or an
        unusable --cluster-key file), 1 when the server cannot start (e.g. port in use, etcd
        not answering, or a config that differs from the cluster's).
        """

    /// What `--version` prints: the release and the wire protocol it speaks (WELCOME's proto=).
    public static let version = "arbiter 1.0.0 (protocol 1)"

    static let flags = [
        "--version", "--host", "--port", "--config", "--log-level", "--ws-echo", "--help", "--journal", "--journal-sync", "--journal-max-bytes",
        "--max-connections", "--rate", "--burst", "--idle-timeout", "--max-line", "--max-ws-message",
        "--max-outbound", "--head-timeout", "--reactors",
        "--allow-host", "--allow-origin", "--backlog", "--key-failures", "--key-failure-rate",
        "--max-total-outbound", "--open-admin", "--cluster", "--node", "--advertise", "--cluster-key", "--cluster-ttl",
        "--no-advertise-check", "--idle-spin", "--no-arrival-stamps",
    ]

    public static func parse(_ arguments: [String]) throws(UsageError) -> ArbiterOptions {
        var options = ArbiterOptions()
        var reader = FlagReader(arguments)
        func value(_ flag: String, _ inline: String?) throws(UsageError) -> String { try reader.value(flag, inline) }
        func number(_ flag: String, _ text: String, _ range: ClosedRange<Int>) throws(UsageError) -> Int {
            try FlagReader.number(flag, text, range)
        }
        while let (argument, flag, inline) = reader.next() {
            switch flag {
            case "-h", "--help":
                options.showHelp = true
            case "--version":
                options.showVersion = true
            case "--host":
                var host = try value(flag, inline)
                // [::1] as in a URL is accepted too.
                if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
                guard cs_ip_literal_version(host) != 0 || host == "localhost" else {
                    throw UsageError(message: "--host must be an IP address such as 127.0.0.1, 0.0.0.0, ::1 or ::, not '\(host)'")
                }
                options.host = host
            case "--port":
                let text = try value(flag, inline)
                guard let port = UInt16(text) else { throw UsageError(message: "--port must be a number from 0 to 65535, not '\(text)'") }
                options.port = port
            case "--ws-echo":
                options.webSocketEcho = true
            case "--open-admin":
                options.openAdmin = true
            case "--no-advertise-check":
                options.checksAdvertise = false
            case "--no-arrival-stamps":
                options.arrivalStamps = false
            case "--journal":
                options.journalPath = try value(flag, inline)
            case "--journal-sync":
                options.journalSync = true
            case "--journal-max-bytes":
                let bytes = try number(flag, try value(flag, inline), 0...1 << 40)
                guard bytes == 0 || bytes >= 65536 else {
                    throw UsageError(message: "--journal-max-bytes must be 0 or at least 65536, not \(bytes)")
                }
                options.journalMaxBytes = bytes
            case "--max-connections":
                options.maxConnections = try number(flag, try value(flag, inline), 1...1_000_000)
            case "--rate":
                options.commandsPerSecond = try number(flag, try value(flag, inline), 0...10_000_000)
            case "--burst":
                options.commandBurst = try number(flag, try value(flag, inline), 1...10_000_000)
            case "--idle-timeout":
                options.idleTimeoutSeconds = try number(flag, try value(flag, inline), 0...31_536_000)
            case "--max-line":
                options.maxLineBytes = try number(flag, try value(flag, inline), 64...1 << 20)
            case "--max-ws-message":
                options.maxWebSocketMessageBytes = try number(flag, try value(flag, inline), 125...64 << 20)
            case "--max-outbound":
                options.maxOutboundBytes = try number(flag, try value(flag, inline), 4096...1 << 30)
            case "--key-failures":
                options.keyFailures = try number(flag, try value(flag, inline), 0...1_000_000)
            case "--key-failure-rate":
                options.keyFailureRate = try number(flag, try value(flag, inline), 0...1_000_000)
            case "--backlog":
                options.backlog = try number(flag, try value(flag, inline), 1...Int(Int32.max))
            case "--max-total-outbound":
                options.maxTotalOutboundBytes = try number(flag, try value(flag, inline), 65536...1 << 40)
            case "--idle-spin":
                options.idleSpinMicroseconds = try number(flag, try value(flag, inline), 0...1000)
            case "--reactors":
                options.reactors = try number(flag, try value(flag, inline), 1...256)
            case "--head-timeout":
                options.headTimeoutSeconds = try number(flag, try value(flag, inline), 1...3600)
            case "--allow-host":
                let text = try value(flag, inline)
                let name = HostPolicy.normalizedName(text)
                let isName =
                    !name.isEmpty
                    && name.utf8.allSatisfy { c in
                        (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == UInt8(ascii: "-") || c == UInt8(ascii: ".")
                    }
                guard isName || cs_ip_literal_version(name) != 0 else {
                    throw UsageError(
                        message: "--allow-host must be a host name or address such as panel.example.org or 10.0.0.7, without a port, not '\(text)'")
                }
                options.allowedHosts.append(name)
            case "--allow-origin":
                let text = try value(flag, inline)
                guard text == "null" || text.hasPrefix("http://") || text.hasPrefix("https://") else {
                    throw UsageError(message: "--allow-origin must be an origin such as https://panel.example.org, not '\(text)'")
                }
                options.allowedOrigins.append(text)
            case "--config":
                options.configPath = try value(flag, inline)
            case "--cluster":
                let text = try value(flag, inline)
                switch EtcdEndpoint.parseList(text) {
                case .success(let endpoints): options.clusterEndpoints = endpoints
                case .failure(let error):
                    throw UsageError(message: "--cluster takes etcd's client URLs, e.g. http://10.0.0.1:2379,http://10.0.0.2:2379: \(error)")
                }
            case "--node":
                let name = try value(flag, inline)
                guard ArbiterOptions.isNodeName(name) else {
                    throw UsageError(message: "--node must match [A-Za-z0-9._-]{1,64}, not '\(name)'")
                }
                options.node = name
            case "--advertise":
                let text = try value(flag, inline)
                guard ArbiterOptions.isHostPort(text) else {
                    throw UsageError(message: "--advertise must be host:port as other nodes and kiosks reach this node, e.g. 10.0.0.11:7070, not '\(text)'")
                }
                options.advertise = text
            case "--cluster-key":
                options.clusterKeyPath = try value(flag, inline)
            case "--cluster-ttl":
                let seconds = Int64(try number(flag, try value(flag, inline), 1...3600))
                if let problem = ClusterTiming(ttlSeconds: seconds).problem {
                    throw UsageError(message: "--cluster-ttl \(seconds) cannot be used: \(problem)")
                }
                options.clusterTTLSeconds = seconds
            case "--log-level":
                let text = try value(flag, inline)
                guard let level = LogLevel(name: text) else {
                    throw UsageError(message: "--log-level must be debug, info, warn, error or off, not '\(text)'")
                }
                options.logLevel = level
            default:
                throw FlagReader.unknown(argument, flag: flag, known: flags)
            }
        }
        try options.checkCluster(given: arguments)
        return options
    }

    /// The cluster flags go together: all of them with --cluster, none without.
    private func checkCluster(given arguments: [String]) throws(UsageError) {
        let clusterOnly = ["--node", "--advertise", "--cluster-key", "--cluster-ttl", "--no-advertise-check"]
        guard clusterEndpoints != nil else {
            if let flag = clusterOnly.first(where: { f in arguments.contains { $0 == f || $0.hasPrefix(f + "=") } }) {
                throw UsageError(message: "\(flag) only applies with --cluster <etcd URLs>")
            }
            return
        }
        if node == nil { throw UsageError(message: "--cluster needs --node <name>, this node's name in the cluster") }
        if advertise == nil { throw UsageError(message: "--cluster needs --advertise <host:port>, how other nodes and kiosks reach this node") }
        if clusterKeyPath == nil { throw UsageError(message: "--cluster needs --cluster-key <file>, the secret shared by every node") }
    }

    /// What the relay handshake accepts as a node's name.
    static func isNodeName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.utf8.allSatisfy { c in
                (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A) || (c >= 0x30 && c <= 0x39) || c == 0x2E || c == 0x5F || c == 0x2D
            }
    }

    /// `host:port` or `[v6]:port`, port 1-65535.
    static func isHostPort(_ text: String) -> Bool {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]), port > 0 else { return false }
        var host = text[..<colon]
        if host.hasPrefix("[") {
            guard host.hasSuffix("]") else { return false }
            host = host.dropFirst().dropLast()
            return !host.isEmpty && host.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
        }
        return !host.isEmpty && !host.contains(":") && !host.contains("/") && !host.contains(" ")
    }
}
