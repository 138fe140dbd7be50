import Foundation

/// The built `arbiter` binary, run as a user would run it.
public final class ArbiterProcess: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public let process = Process()
    private let errPipe = Pipe()
    private let outPipe = Pipe()
    /// Guards what the reader thread and the termination handler write; broadcast at each
    /// change, so a wait wakes on the event itself and never polls.
    private let changed = NSCondition()
    private var stderrText = ""
    private var stderrClosed = false
    private let exited = DispatchSemaphore(value: 0)
    public private(set) var port: UInt16 = 0

    /// The binary next to the test bundle (`swift test` builds it: the end-to-end
    /// target depends on it).
    public static var binaryURL: URL {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("arbiter")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: ".build/debug/arbiter")
    }

    /// Starts the binary; with `waitForPort`, returns once it logged the port it listens on.
    public init(_ arguments: [String], waitForPort: Bool = true) throws {
        process.executableURL = Self.binaryURL
        process.arguments = arguments
        process.standardError = errPipe
        process.standardOutput = outPipe
        // Foundation reaps the child itself, so its handler, not a waitpid of ours, says
        // when it is gone.
        let exited = self.exited
        process.terminationHandler = { _ in exited.signal() }
        // A thread of its own reads standard error until the process closes it, holding the
        // handle until then. Not `readabilityHandler`: on Linux it is a Dispatch source,
        // and a pipe closed while that source was being torn down crashed the whole test
        // process inside libdispatch's manager thread (`_dispatch_event_loop_drain`, seen
        // once in CI; swift-subprocess hit the same and moved to plain reads).
        let handle = errPipe.fileHandleForReading
        let changed = self.changed
        let reader = Thread { [weak self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0, let self else { break }
                changed.lock()
                self.stderrText += String(decoding: buffer[..<n], as: UTF8.self)
                changed.broadcast()
                changed.unlock()
            }
            changed.lock()
            self?.stderrClosed = true
            changed.broadcast()
            changed.unlock()
            withExtendedLifetime(handle) {}
        }
        try process.run()
        // `run` closed this process's copy of the write end: EOF comes when the child exits.
        reader.start()
        guard waitForPort else { return }
        let port = waitForStderr(timeout: 10) { text -> UInt16? in
            guard let line = text.split(separator: "\n").first(where: { $0.contains("msg=listening") }),
                let p = line.split(separator: " ").first(where: { $0.hasPrefix("port=") })
            else { return nil }
            return UInt16(p.dropFirst(5))
        }
        guard let port else {
            if waitForStderrClosed(timeout: 0) { throw Failure(description: "arbiter exited: \(stderr)") }
            throw Failure(description: "arbiter did not log its port: \(stderr)")
        }
        self.port = port
    }

    public var stderr: String {
        changed.lock()
        defer { changed.unlock() }
        return stderrText
    }

    /// What `find` makes of standard error once it finds something there, waiting at most
    /// `timeout` seconds for the text it needs (it is read asynchronously); nil if it
    /// never did, or the process closed standard error first.
    public func waitForStderr<T>(timeout: Double, _ find: (String) -> T?) -> T? {
        let deadline = Deadline(after: timeout)
        changed.lock()
        defer { changed.unlock() }
        while true {
            if let found = find(stderrText) { return found }
            // Each wait ends at the next change, at EOF, or at the deadline, taken again
            // from the monotonic clock every time round.
            guard !stderrClosed, !deadline.hasPassed else { return nil }
            _ = changed.wait(until: Date(timeIntervalSinceNow: deadline.remaining))
        }
    }

    /// Whether standard error contains `text` within `timeout` (it is read asynchronously).
    public func stderrContains(_ text: String, timeout: Double = 3) -> Bool {
        waitForStderr(timeout: timeout) { $0.contains(text) ? true : nil } ?? false
    }

    /// Whether the process closed standard error (it exited) within `timeout`.
    private func waitForStderrClosed(timeout: Double) -> Bool {
        let deadline = Deadline(after: timeout)
        changed.lock()
        defer { changed.unlock() }
        while !stderrClosed, !deadline.hasPassed {
            _ = changed.wait(until: Date(timeIntervalSinceNow: deadline.remaining))
        }
        return stderrClosed
    }

    /// Runs the binary to completion and returns its exit status, stdout and stderr.
    public static func run(_ arguments: [String], timeout: Double = 10) throws -> (status: Int32, stdout: String, stderr: String) {
        let p = try ArbiterProcess(arguments, waitForPort: false)
        let status = try p.waitForExit(timeout: timeout)
        let out = String(decoding: p.outPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        // All of standard error, not just what the reader thread had when the process ended.
        _ = p.waitForStderrClosed(timeout: 5)
        return (status, out, p.stderr)
    }

    /// Waits for the process to end; its exit status.
    public func waitForExit(timeout: Double) throws -> Int32 {
        let deadline = Deadline(after: timeout)
        // The handler runs on a Dispatch queue, which a loaded test process (the suite in
        // parallel) may reach late: every 100 ms the process is asked as well.
        while exited.wait(timeout: .now() + 0.1) != .success {
            if !process.isRunning { return process.terminationStatus }
            if let status = Self.zombieStatus(of: process.processIdentifier) { return status }
            guard !deadline.hasPassed else {
                let pid = process.processIdentifier
                let state = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? "gone"
                process.interrupt()
                throw Failure(description: "still running after \(timeout)s (pid \(pid): \(state.prefix(60))); stderr: \(stderr.suffix(400))")
            }
        }
        // Signalled once: the next wait must find it ended too.
        exited.signal()
        return process.terminationStatus
    }

    /// The exit status of a child that has ended but that Foundation has not reaped yet
    /// (its reaping runs on a Dispatch queue, which a loaded suite may reach late): the
    /// kernel keeps it in `/proc/<pid>/stat` (state `Z`, field 52). As `terminationStatus`
    /// has it: the exit code, or the signal that ended it.
    static func zombieStatus(of pid: Int32) -> Int32? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        // After the command name in parentheses: field 3 (state) onwards.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.first == "Z", fields.count >= 50, let raw = Int32(fields[49].trimmingCharacters(in: .whitespacesAndNewlines)) else {
            return nil
        }
        return raw & 0x7f == 0 ? (raw >> 8) & 0xff : raw & 0x7f
    }

    public func terminate() {
        if process.isRunning { process.terminate() }
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        }
    }
}
