import Foundation

/// The real `arbiter` binary, started on 127.0.0.1 (or ::1) port 0 for an integration test.
///
/// It is found next to the test bundle in .build/<config>/ (swift test builds every
/// product); the port is read from its `msg=listening ... port=N` log line.
final class ServerProcess {
    let process = Process()
    let port: UInt16
    private let stderr = Pipe()

    struct StartError: Error, CustomStringConvertible {
        var description: String
    }

    init(config: String, host: String = "127.0.0.1") throws {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        var binary = directory.appendingPathComponent("arbiter")
        if !FileManager.default.isExecutableFile(atPath: binary.path) {
            // Some runners put the bundle one level deeper.
            binary = directory.deletingLastPathComponent().appendingPathComponent("arbiter")
        }
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw StartError(description: "no arbiter binary next to \(directory.path); run swift build first")
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("arbiter-load-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).json")
        try config.write(to: file, atomically: true, encoding: .utf8)
        process.executableURL = binary
        process.arguments = ["--host", host, "--port", "0", "--config", file.path, "--log-level", "info"]
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        var log = ""
        var found: UInt16?
        // Bounded: the first lines of the log hold the port; an exited server ends it.
        for _ in 0..<200 {
            let data = stderr.fileHandleForReading.availableData
            if data.isEmpty { break }
            log += String(decoding: data, as: UTF8.self)
            if let range = log.range(of: "msg=listening"), let portRange = log[range.upperBound...].range(of: "port=") {
                let digits = log[portRange.upperBound...].prefix { $0.isNumber }
                found = UInt16(digits)
                if found != nil { break }
            }
        }
        guard let found else {
            process.terminate()
            throw StartError(description: "arbiter did not report its port; log: \(log)")
        }
        port = found
        // Keep draining the log so the server never blocks on a full pipe: a thread of its
        // own, holding the handle until EOF (not `readabilityHandler`, a Dispatch source on
        // Linux whose teardown beside the pipe's close crashed a test run in libdispatch).
        let handle = stderr.fileHandleForReading
        Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
            }
            withExtendedLifetime(handle) {}
        }.start()
    }

    var pid: Int32 { process.processIdentifier }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}
