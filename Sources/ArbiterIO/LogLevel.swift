/// Severity of a log line; lines below the configured level are not written.
public enum LogLevel: Int, Comparable, Sendable, CaseIterable {
    case debug = 0
    case info = 1
    case warning = 2
    case error = 3
    case off = 4

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }

    public var name: String {
        switch self {
        case .debug: "debug"
        case .info: "info"
        case .warning: "warn"
        case .error: "error"
        case .off: "off"
        }
    }

    public init?(name: String) {
        guard let level = LogLevel.allCases.first(where: { $0.name == name.lowercased() || ($0 == .warning && name.lowercased() == "warning") }) else {
            return nil
        }
        self = level
    }
}
