import ArbiterIO

/// Where hooks write their log lines (the server's log, a test's recorder).
public struct HookLog: Sendable {
    public enum Level: Sendable {
        case debug, info, warning
    }

    public let write: @Sendable (Level, String, KeyValuePairs<String, String>) -> Void

    public init(_ write: @escaping @Sendable (Level, String, KeyValuePairs<String, String>) -> Void) {
        self.write = write
    }

    public static let silent = HookLog { _, _, _ in }

    /// Into the server's log, at the same levels.
    public init(_ log: ServerLog) {
        self.init { level, message, fields in log.log(level == .debug ? .debug : level == .info ? .info : .warning, message, fields) }
    }
}
