/// The `arbiter` command line, parsed without running anything.
public struct ArbiterOptions: Equatable, Sendable {
    public var host = "127.0.0.1"
    public var port: UInt16 = 7070
    public var configPath: String?
    public var logLevel: LogLevel = .info
    public var webSocketEcho = false
    public var showHelp = false

    public struct UsageError: Error, Equatable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    public init() {}

    public static let help = """
        OVERVIEW: ButtonArbiter - shared virtual button panels for netcat, scripts and browsers.

        Many people press the same buttons at once; the server decides who holds what and
        tells every member of the panel, in one order.

        USAGE: arbiter [--host <host>] [--port <port>] [--config <file>] [--log-level <level>] [--ws-echo]

        OPTIONS:
          --host <host>         Address to listen on (default: 127.0.0.1; 0.0.0.0 serves a LAN).
          --port <port>         TCP port (default: 7070; 0 picks a free one).
          --config <file>       JSON panel configuration (default: the embedded panel "demo").
          --log-level <level>   debug, info, warn, error or off (default: info).
          --ws-echo             Also serve /ws?echo=1, an echo endpoint on the same WebSocket
                                code, for conformance suites such as Autobahn (default: off).
          -h, --help            Show help information.

        EXAMPLES:
          arbiter                          serve the demo panel on 127.0.0.1:7070
          arbiter --host 0.0.0.0 --config hall.json
          nc localhost 7070                then type HELP

        EXIT STATUS: 0 after a clean shutdown (SIGINT/SIGTERM), 64 for a bad command line,
        78 for a bad configuration, 1 when the server cannot start (e.g. port in use).
        """

    static let flags = ["--host", "--port", "--config", "--log-level", "--ws-echo", "--help"]

    public static func parse(_ arguments: [String]) throws(UsageError) -> ArbiterOptions {
        var options = ArbiterOptions()
        var i = 0
        func value(_ flag: String, _ inline: String?) throws(UsageError) -> String {
            if let inline { return inline }
            i += 1
            guard i < arguments.count, !arguments[i].hasPrefix("--") else {
                throw UsageError(message: "missing value for \(flag)")
            }
            return arguments[i]
        }
        while i < arguments.count {
            let argument = arguments[i]
            var flag = argument
            var inline: String?
            if argument.hasPrefix("--"), let eq = argument.firstIndex(of: "=") {
                flag = String(argument[..<eq])
                inline = String(argument[argument.index(after: eq)...])
            }
            switch flag {
            case "-h", "--help":
                options.showHelp = true
            case "--host":
                let host = try value(flag, inline)
                guard isIPv4(host) || host == "localhost" else {
                    throw UsageError(message: "--host must be an IPv4 address such as 127.0.0.1 or 0.0.0.0, not '\(host)'")
                }
                options.host = host
            case "--port":
                let text = try value(flag, inline)
                guard let port = UInt16(text) else { throw UsageError(message: "--port must be a number from 0 to 65535, not '\(text)'") }
                options.port = port
            case "--ws-echo":
                options.webSocketEcho = true
            case "--config":
                options.configPath = try value(flag, inline)
            case "--log-level":
                let text = try value(flag, inline)
                guard let level = LogLevel(name: text) else {
                    throw UsageError(message: "--log-level must be debug, info, warn, error or off, not '\(text)'")
                }
                options.logLevel = level
            default:
                let hint = closestFlag(to: flag).map { "; did you mean \($0)?" } ?? ""
                throw UsageError(message: "unknown argument '\(argument)'\(hint)")
            }
            i += 1
        }
        return options
    }

    static func isIPv4(_ s: String) -> Bool {
        let parts = s.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { p in p.count <= 3 && !p.isEmpty && (Int(p).map { $0 <= 255 } ?? false) }
    }

    static func closestFlag(to word: String) -> String? {
        guard word.hasPrefix("-") else { return nil }
        let scored = flags.map { flag in (flag, distance(Array(word.utf8), Array(flag.utf8))) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= 3 else { return nil }
        return best.0
    }

    private static func distance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        var previous = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(b.count, 1) where !b.isEmpty {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return a.isEmpty ? b.count : previous[b.count]
    }
}
