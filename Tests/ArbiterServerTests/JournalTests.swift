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
}
