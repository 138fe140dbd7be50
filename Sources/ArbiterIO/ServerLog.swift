import Glibc

/// Writes logfmt lines (`level=info msg="..." key=value`) to standard error.
public struct ServerLog: Sendable {
    public let level: LogLevel
    /// Where lines go instead of standard error (tests read them); nil: standard error.
    private let sink: (@Sendable (String) -> Void)?

    public init(level: LogLevel, sink: (@Sendable (String) -> Void)? = nil) {
        self.level = level
        self.sink = sink
    }

    public func log(_ lineLevel: LogLevel, _ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        guard lineLevel >= level, level != .off else { return }
        var line = "level=\(lineLevel.name) msg=\(Self.quote(message))"
        for (k, v) in fields { line += " \(k)=\(Self.quote(v))" }
        line += "\n"
        if let sink { return sink(line) }
        // One write(2) per line, so lines from different threads never interleave.
        line.withCString { p in _ = Glibc.write(2, p, strlen(p)) }
    }

    public func info(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.info, message, fields) }
    public func warning(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.warning, message, fields) }
    public func error(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.error, message, fields) }
    public func debug(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.debug, message, fields) }

    static func quote(_ value: String) -> String {
        let plain = !value.isEmpty && value.utf8.allSatisfy { $0 > 0x20 && $0 != 0x22 && $0 != 0x3D && $0 != 0x5C && $0 < 0x7F }
        if plain { return value }
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(scalar.value < 0x20 ? "?" : scalar)
            }
        }
        return out + "\""
    }
}
