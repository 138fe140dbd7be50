import ArbiterCore
import ArbiterIO
@testable import ArbiterJournal
@testable import ArbiterServer
import ArbiterTestSupport
import Dispatch
import Foundation
import Testing

/// A run-time compaction happens on its own queue: while its long write is held up,
/// every panel keeps pressing, and what they write meanwhile reaches the new file.
@Suite("journal compaction")
struct JournalCompactionTests {
    /// Holds a compaction's snapshot write until the test opens it.
    final class Gate: @unchecked Sendable {
        let started = DispatchSemaphore(value: 0)
        let open = DispatchSemaphore(value: 0)

        var io: JournalIO {
            var io = JournalIO.system
            io.writeCompacted = { [self] fd, bytes in
                started.signal()
                // Bounded: a test that fails before opening the gate still ends.
                _ = open.wait(timeout: .now() + 20)
                return Sys.writeAll(fd, bytes)
            }
            return io
        }
    }

    @Test func aPressOnAnotherPanelIsServedWhileACompactionIsHeldUp() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let gate = Gate()
        var opened = false
        defer { if !opened { gate.open.signal() } }
        var lastFence = 0
        var inodeBefore: UInt64 = 0
        do {
            let server = try TestServer(panels: [.demo, Panels.quick]) {
                $0.journalPath = path
                $0.journalMaxBytes = 4000
                $0.commandsPerSecond = 0
                $0.journalIO = gate.io
            }
            let a = try server.client(name: "a")
            var compacting = false
            for _ in 0..<500 where !compacting {
                a.send("DOWN demo b1\nUP demo b1")
                _ = try a.expect("GRANTED")
                _ = try a.expect("OK UP")
                compacting = gate.started.wait(timeout: .now()) == .success
            }
            try #require(compacting)
            inodeBefore = try inode(path)

            // Panel A's compaction is stuck in its write; both panels are still served.
            let b = try server.client(name: "b")
            b.send("DOWN t b2")
            #expect(try b.expect("GRANTED").hasPrefix("GRANTED t b2 fence="))
            a.send("DOWN demo b1")
            lastFence = Int(field("fence", of: try a.expect("GRANTED"))!)!
            #expect(FileManager.default.fileExists(atPath: path + ".compacting"))

            gate.open.signal()
            opened = true
            server.server.shutdown()
        }
        // The compacted file holds what both panels wrote while it was being made.
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(!FileManager.default.fileExists(atPath: path + ".compacting"))
        #expect(try inode(path) != inodeBefore)
        #expect(text.hasPrefix(#"{"type":"reserve","panel":"demo","upto":1000}"#))
        #expect(text.contains(#"{"type":"reserve","panel":"t","upto":1000}"#))
        #expect(text.contains(#""panel":"t","button":"b2""#))
        #expect(text.contains(#""fence":\#(lastFence),"#))

        let again = try TestServer(panels: [.demo, Panels.quick]) { $0.journalPath = path }
        let c = try again.client()
        c.send("DOWN t b1")
        #expect(Int(field("fence", of: try c.expect("GRANTED"))!)! > 1)
        c.send("HISTORY demo 1")
        #expect(try c.readLines(through: "OK HISTORY").first?.contains("fence=\(lastFence)") == true)
        again.server.shutdown()
    }

    /// Which file is at `path`: a compaction that went through put a new one there.
    func inode(_ path: String) throws -> UInt64 {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? UInt64)
    }
}
