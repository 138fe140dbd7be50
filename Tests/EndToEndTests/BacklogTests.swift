import ArbiterTestSupport
import Foundation
import Testing

/// In the end-to-end target: reading the backlog runs `ss`, and Foundation's `Process`
/// leaks a weak reference that the sanitizer runs of the server tests would report.
@Suite("listen backlog")
struct BacklogTests {
    /// The backlog of the socket listening on `port`, as the kernel reports it (`ss`
    /// shows it as Send-Q of a listening socket).
    func backlog(port: UInt16) throws -> Int? {
        let ss = Process()
        ss.executableURL = URL(fileURLWithPath: "/usr/bin/ss")
        ss.arguments = ["-Hltn", "sport = :\(port)"]
        let pipe = Pipe()
        ss.standardOutput = pipe
        try ss.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        ss.waitUntilExit()
        let columns = output.split(whereSeparator: \.isWhitespace)
        return columns.count >= 3 ? Int(columns[2]) : nil
    }

    @Test func theDefaultIsTheSystemMaximum() throws {
        let text = try String(contentsOfFile: "/proc/sys/net/core/somaxconn", encoding: .utf8)
        let maximum = try #require(Int(text.trimmingCharacters(in: .whitespacesAndNewlines)))
        let arbiter = try ArbiterProcess(["--port", "0"])
        defer { arbiter.terminate() }
        #expect(try backlog(port: arbiter.port) == maximum)
    }

    @Test func theFlagSetsIt() throws {
        let arbiter = try ArbiterProcess(["--port", "0", "--backlog", "77"])
        defer { arbiter.terminate() }
        #expect(try backlog(port: arbiter.port) == 77)
    }
}
