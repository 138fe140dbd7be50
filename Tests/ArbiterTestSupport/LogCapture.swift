import Dispatch
import Foundation

/// The log lines of servers a test started, kept in memory instead of standard error:
/// tests stage failures (an unreachable peer, a full disk) whose warnings are expected,
/// and a passing run should read clean. A test that expects a warning reads it here.
/// `ARBITER_TEST_LOG=1` writes the lines to standard error as well, to watch a run.
public final class LogCapture: @unchecked Sendable {
    private let lock = NSLock()
    private var kept: [String] = []
    /// The oldest lines go first past this: a test that fails keeps its last words.
    private let limit: Int
    private let echo = ProcessInfo.processInfo.environment["ARBITER_TEST_LOG"].map { !$0.isEmpty && $0 != "0" } ?? false

    public init(limit: Int = 10_000) {
        self.limit = limit
    }

    /// A sink for `ServerConfiguration.logSink`; `prefix` tells servers apart (`n1 `).
    public func sink(prefix: String = "") -> @Sendable (String) -> Void {
        { [self] line in record(prefix + line) }
    }

    private func record(_ line: String) {
        if echo { FileHandle.standardError.write(Data(line.utf8)) }
        let trimmed = line.hasSuffix("\n") ? String(line.dropLast()) : line
        lock.withLock {
            kept.append(trimmed)
            if kept.count > limit { kept.removeFirst(kept.count - limit) }
        }
        recorded.signal()
    }

    private let recorded = DispatchSemaphore(value: 0)

    /// Waits, on each new line rather than by polling, until `count` lines contain `text`
    /// (or `timeout` s); those lines.
    @discardableResult
    public func wait(for text: String, count: Int = 1, timeout: Double = 10) -> [String] {
        let end = DispatchTime.now() + timeout
        while lines(containing: text).count < count {
            guard recorded.wait(timeout: end) == .success else { break }
        }
        return lines(containing: text)
    }

    public var lines: [String] { lock.withLock { kept } }

    public func lines(containing text: String) -> [String] { lines.filter { $0.contains(text) } }
}
