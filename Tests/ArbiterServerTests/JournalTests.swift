import ArbiterCore
import ArbiterTestSupport
import Foundation
import Testing

@Suite("journal")
struct JournalTests {
    func temporaryFile() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).jsonl").path
    }

    @Test func fencesContinueAboveEverythingHandedOutAndHistoryReadsIt() throws {
        let path = temporaryFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var lastFence = 0
        do {
            let server = try TestServer { $0.journalPath = path }
            let c = try server.client(name: "first")
            for _ in 0..<3 {
                c.send("DOWN demo b1\nUP demo b1")
                let granted = try c.expect("GRANTED")
                lastFence = Int(field("fence", of: granted)!)!
                _ = try c.expect("OK UP")
            }
            server.server.shutdown()
        }
        let server = try TestServer { $0.journalPath = path }
        let c = try server.client(name: "second")
        // The snapshot names the last fence handed out, not the reserved block above it.
        c.send("JOIN demo")
        #expect(try c.expect("OK JOIN").hasPrefix("OK JOIN demo members=1 fence=\(lastFence) "))
        c.send("LEAVE demo")
        _ = try c.expect("OK LEAVE")
        c.send("DOWN demo b2")
        let fence = Int(field("fence", of: try c.expect("GRANTED"))!)!
        #expect(fence > lastFence)
        c.send("HISTORY demo 4")
        let history = try c.readLines(through: "OK HISTORY")
        #expect(history.last == "OK HISTORY demo count=4")
        #expect(history[0].hasPrefix("RECORD demo b1 event=fired at="))
        #expect(history[1].hasPrefix("RECORD demo b1 event=released at="))
        #expect(history[1].contains("reason=up owner=first fence=\(lastFence)"))
        #expect(history[2].hasPrefix("RECORD demo b2 event=pressed"))
    }

    @Test func aTornLastLineIsSkippedNotFatal() throws {
        let path = temporaryFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let good = #"{"type":"record","panel":"demo","button":"b1","event":"pressed","at":1,"owner":"x","session":"s1","fence":41,"seq":1}"#
        try Data((good + "\n{\"type\":\"record\",\"panel\":\"de").utf8).write(to: URL(fileURLWithPath: path))
        let server = try TestServer { $0.journalPath = path }
        let c = try server.client()
        c.send("DOWN demo b1")
        #expect(Int(field("fence", of: try c.expect("GRANTED"))!)! > 41)
        c.send("HISTORY demo")
        let history = try c.readLines(through: "OK HISTORY")
        #expect(history.first?.hasPrefix("RECORD demo b1 event=pressed at=1 owner=x session=s1 fence=41") == true)
        server.server.shutdown()
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(!text.contains("\"panel\":\"de\n"))
        #expect(text.split(separator: "\n").allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil })
    }

    func record(fence: Int, panel: String = "demo") -> String {
        #"{"type":"record","panel":"\#(panel)","button":"b1","event":"pressed","at":\#(fence),"owner":"x","session":"s1","fence":\#(fence),"seq":\#(fence)}"#
    }

    /// A journal several times longer than what a restart needs is rewritten at start to
    /// each panel's highest fence and last 1000 records; fences and HISTORY carry on.
    @Test func aLongJournalIsCompactedAtStart() throws {
        let path = temporaryFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var lines = (1...3000).map { record(fence: $0) }
        lines.insert(#"{"type":"reserve","panel":"demo","upto":3500}"#, at: 1500)
        lines.append(record(fence: 7, panel: "gone"))
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))

        let server = try TestServer { $0.journalPath = path }
        let compacted = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(compacted.count == 1 + 1000 + 1 + 1)
        #expect(compacted[0] == #"{"type":"reserve","panel":"demo","upto":3500}"#)
        #expect(compacted[1] == record(fence: 2001))
        #expect(compacted[1000] == record(fence: 3000))
        #expect(compacted[1001] == #"{"type":"reserve","panel":"gone","upto":7}"#)
        #expect(compacted[1002] == record(fence: 7, panel: "gone"))
        #expect(!FileManager.default.fileExists(atPath: path + ".compacting"))

        let c = try server.client()
        c.send("DOWN demo b2")
        #expect(Int(field("fence", of: try c.expect("GRANTED"))!)! > 3500)
        c.send("HISTORY demo 1000")
        let history = try c.readLines(through: "OK HISTORY")
        #expect(history.last == "OK HISTORY demo count=1000")
        #expect(history.contains { $0.contains("fence=3000 ") || $0.hasSuffix("fence=3000") })
        server.server.shutdown()

        // The next start reads the compacted file, and leaves it alone: nothing to gain.
        let before = try String(contentsOfFile: path, encoding: .utf8)
        let again = try TestServer { $0.journalPath = path }
        let c2 = try again.client()
        c2.send("DOWN demo b3")
        #expect(Int(field("fence", of: try c2.expect("GRANTED"))!)! > 3501)
        again.server.shutdown()
        #expect(try String(contentsOfFile: path, encoding: .utf8).hasPrefix(before))
    }

    /// An operator's symlink to the journal survives compaction, and so do the file's
    /// permissions: the file pointed to is what gets replaced.
    @Test func compactionKeepsTheSymlinkAndTheMode() throws {
        let real = temporaryFile()
        let link = temporaryFile()
        defer {
            try? FileManager.default.removeItem(atPath: real)
            try? FileManager.default.removeItem(atPath: link)
        }
        try Data(((1...2500).map { record(fence: $0) }.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: real))
        #expect(chmod(real, 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: real)

        let server = try TestServer { $0.journalPath = link }
        server.server.shutdown()
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == real)
        let lines = try String(contentsOfFile: real, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 1 + 1000)
        #expect(lines.first == #"{"type":"reserve","panel":"demo","upto":2500}"#)
        let mode = try FileManager.default.attributesOfItem(atPath: real)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    /// A server that never restarts still keeps its journal bounded: past
    /// `journalMaxBytes` the file is compacted while the server runs, and the next
    /// start finds fences and history as they were.
    @Test func aGrowingJournalIsCompactedWhileServing() throws {
        let path = temporaryFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var lastFence = 0
        do {
            let server = try TestServer {
                $0.journalPath = path
                $0.journalMaxBytes = 20_000
                $0.commandsPerSecond = 0
            }
            let c = try server.client(name: "runner")
            // Compactions run on their own queue, so how far they have got after a given
            // number of presses depends on the machine: press (a bounded number of times)
            // until one has dropped the first records.
            for cycle in 1...3000 {
                c.send("DOWN demo b1\nUP demo b1")
                lastFence = Int(field("fence", of: try c.expect("GRANTED"))!)!
                _ = try c.expect("OK UP")
                if cycle >= 600, cycle % 100 == 0,
                    try !String(contentsOfFile: path, encoding: .utf8).contains(#""fence":1,"#)
                {
                    break
                }
            }
            server.server.shutdown()
        }
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let lines = text.split(separator: "\n")
        // Each cycle wrote 3 records; the oldest are gone, a reservation leads.
        #expect(lines.count < 3 * lastFence)
        #expect(lines.first?.hasPrefix(#"{"type":"reserve","panel":"demo","upto":"#) == true)
        #expect(!text.contains(#""fence":1,"#))
        #expect(text.contains(#""fence":\#(lastFence),"#))
        #expect(!FileManager.default.fileExists(atPath: path + ".compacting"))

        let again = try TestServer { $0.journalPath = path }
        let c = try again.client()
        c.send("DOWN demo b2")
        #expect(Int(field("fence", of: try c.expect("GRANTED"))!)! > lastFence)
        c.send("HISTORY demo 3")
        let history = try c.readLines(through: "OK HISTORY")
        #expect(history.first?.contains("fence=\(lastFence)") == true)
        again.server.shutdown()
    }
}
