import ArbiterCLI
import ArbiterIO

extension LoadOptions {
    /// The same error, worded the same way, as the server's command line.
    public typealias UsageError = ArbiterCLI.UsageError

    static let flags = [
        "--host", "--hosts", "--port", "--redis", "--panel", "--panels", "--connections", "--members", "--buttons", "--pressers",
        "--observers", "--ws-fraction", "--duration", "--warmup", "--cycles", "--threads", "--seed",
        "--server-pid", "--json", "--no-check", "--max-hold-ms", "--connect-batch", "--lock-ttl-ms",
        "--holds", "--talks", "--groups", "--hold-ms", "--long-ms", "--min-talk-ms", "--policy", "--max-queue",
        "--early-lockout-ms", "--announce", "--help",
    ]

    /// Parses `<workload> [flags]`; flags accept `--flag value` and `--flag=value`.
    public static func parse(_ arguments: [String]) throws(UsageError) -> LoadOptions {
        var o = LoadOptions()
        var reader = FlagReader(arguments)
        var sawWorkload = false
        func value(_ flag: String, _ inline: String?) throws(UsageError) -> String { try reader.value(flag, inline) }
        func int(_ flag: String, _ inline: String?, min: Int = 0, max: Int = 10_000_000) throws(UsageError) -> Int {
            try FlagReader.number(flag, try value(flag, inline), min...max)
        }
        func seconds(_ flag: String, _ inline: String?) throws(UsageError) -> Double {
            let text = try value(flag, inline)
            guard let s = Double(text), s >= 0, s <= 86_400 else { throw UsageError(message: "\(flag) must be seconds from 0 to 86400, not '\(text)'") }
            return s
        }
        while let (argument, flag, inline) = reader.next() {
            switch flag {
            case "-h", "--help", "help": o.showHelp = true
            case "--host":
                let text = try value(flag, inline)
                guard let host = HostLiteral(text) else {
                    throw UsageError(message: "--host must be an IP address such as 127.0.0.1 or ::1 (or localhost), not '\(text)'")
                }
                o.host = host.address
            case "--port": o.port = UInt16(try int(flag, inline, min: 1, max: 65535))
            case "--hosts":
                switch LoadHost.parseList(try value(flag, inline)) {
                case .success(let hosts):
                    o.hosts = hosts
                    // The setup probe and the kept observer use the first node.
                    o.host = hosts[0].host
                    o.port = hosts[0].port
                case .failure(let error):
                    throw error
                }
            case "--redis":
                let text = try value(flag, inline)
                guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]), port > 0,
                    let host = HostLiteral(String(text[..<colon]))
                else {
                    throw UsageError(message: "--redis must be HOST:PORT such as 127.0.0.1:6379 or [::1]:6379, not '\(text)'")
                }
                o.redisHost = host.address
                o.redisPort = port
            case "--panel": o.panel = try value(flag, inline)
            case "--panels": o.panels = try int(flag, inline, min: 1, max: 1000)
            case "--connections", "--members": o.connections = try int(flag, inline, min: 1, max: 1_000_000)
            case "--buttons": o.buttons = try int(flag, inline, min: 0, max: 1000)
            case "--pressers": o.pressers = try int(flag, inline, min: 1, max: 100_000)
            case "--observers": o.observers = try int(flag, inline, max: 1000)
            case "--ws-fraction":
                let text = try value(flag, inline)
                guard let f = Double(text), f >= 0, f <= 1 else { throw UsageError(message: "--ws-fraction must be from 0 to 1, not '\(text)'") }
                o.wsFraction = f
            case "--duration": o.duration = try seconds(flag, inline)
            case "--warmup": o.warmup = try seconds(flag, inline)
            case "--cycles": o.cycles = try int(flag, inline, min: 1, max: 1 << 40)
            case "--threads": o.threads = try int(flag, inline, min: 1, max: 64)
            case "--seed": o.seed = UInt64(try int(flag, inline, max: Int.max))
            case "--server-pid": o.serverPID = Int32(try int(flag, inline, min: 1, max: Int(Int32.max)))
            case "--json": o.json = true
            case "--no-check": o.noCheck = true
            case "--max-hold-ms": o.maxHoldMs = try int(flag, inline, max: 600_000)
            case "--connect-batch": o.connectBatch = try int(flag, inline, min: 1, max: 100_000)
            case "--lock-ttl-ms": o.lockTTLms = try int(flag, inline, min: 1, max: 86_400_000)
            case "--holds": o.holdButtons = try int(flag, inline, max: 1000)
            case "--talks": o.talkButtons = try int(flag, inline, max: 1000)
            case "--groups": o.groups = try int(flag, inline, min: 1, max: 1000)
            case "--hold-ms": o.holdMs = try int(flag, inline, min: 1, max: 86_400_000)
            case "--long-ms": o.longMs = try int(flag, inline, min: 1, max: 86_400_000)
            case "--min-talk-ms": o.minTalkMs = try int(flag, inline, max: 86_400_000)
            case "--policy":
                let p = try value(flag, inline)
                guard p == "queue" || p == "buzzer" else { throw UsageError(message: "--policy must be queue or buzzer, not '\(p)'") }
                o.policy = p
            case "--max-queue": o.maxQueue = try int(flag, inline, min: 1, max: 100_000)
            case "--early-lockout-ms": o.earlyLockoutMs = try int(flag, inline, max: 86_400_000)
            case "--announce": o.announce = try int(flag, inline, min: 1, max: 100_000)
            default:
                if !argument.hasPrefix("-"), !sawWorkload, let w = Workload(rawValue: argument) {
                    o.workload = w
                    sawWorkload = true
                } else if !argument.hasPrefix("-"), sawWorkload {
                    throw UsageError(message: "unexpected argument '\(argument)' after the workload \(o.workload.rawValue); flags take one value each")
                } else if !argument.hasPrefix("-") {
                    let names = Workload.allCases.map(\.rawValue)
                    let choose = "choose one of \(names.joined(separator: ", "))"
                    // A near word is a slip of the keyboard ("fanot", "contention"); say which was meant.
                    let hint = FlagReader.closest(argument.lowercased(), among: names, within: max(3, argument.count / 2))
                    throw UsageError(message: "unknown workload '\(argument)'; " + (hint.map { "did you mean \($0)? Or " + choose } ?? choose))
                } else {
                    throw FlagReader.unknown(argument, flag: flag, known: flags)
                }
            }
        }
        guard sawWorkload || o.showHelp else {
            throw UsageError(message: "name a workload: \(Workload.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if o.isRedis && (o.workload == .holds || o.workload == .queue || o.workload == .buzz) {
            throw UsageError(message: "\(o.workload.rawValue) has no Redis equivalent; --redis works with contend, fanout and idle")
        }
        if o.isRedis && !o.hosts.isEmpty {
            throw UsageError(message: "--hosts lists arbiter nodes; it does not apply to --redis")
        }
        if o.isRedis && o.wsFraction > 0 {
            throw UsageError(message: "--ws-fraction does not apply to --redis")
        }
        if o.panels > 1 && o.workload != .contend && o.workload != .config {
            throw UsageError(message: "--panels applies to contend and config, not \(o.workload.rawValue)")
        }
        if o.announce != nil && o.workload == .config && o.policy != "buzzer" {
            throw UsageError(message: "--announce is a buzzer group's: config --policy buzzer --announce <n>")
        }
        if o.announce != nil && o.workload != .config && o.workload != .buzz {
            throw UsageError(message: "--announce applies to buzz and config, not \(o.workload.rawValue)")
        }
        let total = o.buttons.map { $0 } ?? 0
        if o.workload == .config && total + o.holdButtons + o.talkButtons > 1000 {
            throw UsageError(message: "a panel holds at most 1000 buttons")
        }
        if o.workload == .config && o.buttons == 0 && o.holdButtons + o.talkButtons == 0 {
            throw UsageError(message: "a panel needs at least one button: --buttons 0 goes with --holds or --talks")
        }
        if o.workload != .config && o.buttons == 0 {
            throw UsageError(message: "--buttons must be at least 1 for \(o.workload.rawValue)")
        }
        return o
    }
}
