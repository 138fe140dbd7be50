import ArbiterIO

/// Where hooks write their log lines (the server's log, a test's recorder).
public struct HookLog: Sendable {
    public enum Level: Sendable {
        case debug, info, warning
    }

    public let write: @Sendable (Level, String, KeyValuePairs<String, String>) -> Void
    /// Whether debug lines go anywhere: a delivery's line is then not even built.
    public let writesDebug: Bool

    public init(writesDebug: Bool = true, _ write: @escaping @Sendable (Level, String, KeyValuePairs<String, String>) -> Void) {
        self.write = write
        self.writesDebug = writesDebug
    }

    public static let silent = HookLog(writesDebug: false) { _, _, _ in }

    /// Into the server's log, at the same levels.
    public init(_ log: ServerLog) {
        self.init(writesDebug: log.level == .debug) { level, message, fields in
            log.log(level == .debug ? .debug : level == .info ? .info : .warning, message, fields)
        }
    }
}
