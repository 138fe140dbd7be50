import Foundation

/// The built `arbiter` binary, run as a user would run it.
public final class ArbiterProcess: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public let process = Process()
    private let errPipe = Pipe()
    private let outPipe = Pipe()
    private let lock = NSLock()
    private var stderrText = ""
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
        // A thread of its own reads standard error until the process closes it, holding the
        // handle until then. Not `readabilityHandler`: on Linux it is a Dispatch source,
        // and a pipe closed while that source was being torn down crashed the whole test
        // process inside libdispatch's manager thread (`_dispatch_event_loop_drain`, seen
        // once in CI; swift-subprocess hit the same and moved to plain reads).
        let handle = errPipe.fileHandleForReading
        let reader = Thread { [weak self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0, let self else { break }
                self.lock.lock()
                self.stderrText += String(decoding: buffer[..<n], as: UTF8.self)
                self.lock.unlock()
            }
            withExtendedLifetime(handle) {}
        }
        try process.run()
        // `run` closed this process's copy of the write end: EOF comes when the child exits.
        reader.start()
        guard waitForPort else { return }
        let deadline = Deadline(after: 10)
        while !deadline.hasPassed {
            if let line = stderr.split(separator: "\n").first(where: { $0.contains("msg=listening") }),
                let p = line.split(separator: " ").first(where: { $0.hasPrefix("port=") }), let port = UInt16(p.dropFirst(5))
            {
                self.port = port
                return
            }
            if !process.isRunning { throw Failure(description: "arbiter exited: \(stderr)") }
            usleep(10_000)
        }
        throw Failure(description: "arbiter did not log its port: \(stderr)")
    }

    public var stderr: String {
        lock.lock()
        defer { lock.unlock() }
        return stderrText
    }

    /// Whether standard error contains `text` within `timeout` (it is read asynchronously).
    public func stderrContains(_ text: String, timeout: Double = 3) -> Bool {
        let deadline = Deadline(after: timeout)
        while !deadline.hasPassed {
            if stderr.contains(text) { return true }
            usleep(10_000)
        }
        return stderr.contains(text)
    }

    /// Runs the binary to completion and returns its exit status, stdout and stderr.
    public static func run(_ arguments: [String], timeout: Double = 10) throws -> (status: Int32, stdout: String, stderr: String) {
        let p = try ArbiterProcess(arguments, waitForPort: false)
        let status = try p.waitForExit(timeout: timeout)
        let out = String(decoding: p.outPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        usleep(50_000)
        return (status, out, p.stderr)
    }

    /// Waits for the process to end; its exit status.
    public func waitForExit(timeout: Double) throws -> Int32 {
        let deadline = Deadline(after: timeout)
        while process.isRunning {
            guard !deadline.hasPassed else {
                process.interrupt()
                throw Failure(description: "still running after \(timeout)s")
            }
            usleep(10_000)
        }
        return process.terminationStatus
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
