import ArbiterTestSupport
import Foundation
import Testing

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
        let server = try TestServer()
        #expect(try backlog(port: server.port) == maximum)
    }

    @Test func theFlagSetsIt() throws {
        let server = try TestServer { $0.listenBacklog = 77 }
        #expect(try backlog(port: server.port) == 77)
    }
}
