import ArbiterCore
@testable import ArbiterJournal
@testable import ArbiterServer
import ArbiterTestSupport
import Foundation
import Testing

/// Redis's AOF rule: a torn last line is cut off with a warning; any other line the
/// server did not write stops the start, naming the file and the line, and the file is
/// left as it was for the operator.
@Suite("damaged and shared journals")
struct JournalDamageTests {
    func temporaryFile() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("journal-dmg-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).jsonl").path
    }

    static let good = #"{"type":"record","panel":"demo","button":"b1","event":"pressed","at":1,"owner":"x","session":"s1","fence":41,"seq":1}"#

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: [UInt8]
        var line: Int
        var says: String
        var testDescription: String { name }
    }

    static func reserve(_ upTo: String) -> [UInt8] { Array(#"{"type":"reserve","panel":"demo","upto":\#(upTo)}"#.utf8) + [0x0A] }

    static let cases: [Case] = [
        Case(name: "BOM", bytes: [0xEF, 0xBB, 0xBF] + reserve("5000"), line: 1, says: "byte order mark"),
        Case(name: "upto as a string", bytes: reserve("\"5000\""), line: 1, says: #"not the string "5000""#),
        Case(name: "negative upto", bytes: reserve("-5000"), line: 1, says: "not -5000"),
        Case(name: "float upto", bytes: reserve("5000.5"), line: 1, says: "not 5000.5"),
        Case(name: "1e30", bytes: reserve("1e30"), line: 1, says: "not 1e30"),
        Case(name: "above 2^64-1", bytes: reserve("18446744073709551616"), line: 1, says: "not 18446744073709551616"),
        Case(name: "NULs", bytes: [UInt8](repeating: 0, count: 4096), line: 1, says: "NUL"),
        Case(name: "NULs with line ends", bytes: [0, 0, 0, 0x0A, 0, 0x0A], line: 1, says: "NUL"),
        Case(name: "binary", bytes: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0xFF, 0xFE], line: 1, says: "not JSON"),
        Case(name: "garbage in the middle", bytes: Array((good + "\nhello there\n" + good + "\n").utf8), line: 2, says: "not JSON"),
        Case(name: "another type", bytes: Array((good + "\n" + #"{"type":"note","panel":"demo"}"# + "\n").utf8), line: 2, says: "neither"),
        Case(
            name: "a negative fence", bytes: Array((#"{"type":"record","panel":"demo","button":"b1","event":"pressed","at":1,"fence":-2}"# + "\n").utf8),
            line: 1, says: #""fence" must be a whole number"#),
    ]

    @Test(arguments: cases)
    func aLineTheServerDidNotWriteStopsTheStart(_ c: Case) throws {
        let path = temporaryFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(c.bytes).write(to: URL(fileURLWithPath: path))
        do {
            _ = try TestServer { $0.journalPath = path }
            Issue.record("the server started on \(c.name)")
        } catch let damaged as JournalDamaged {
            #expect(damaged.line == c.line)
            let text = damaged.description
            #expect(text.hasPrefix("journal \(path), line \(c.line): "), "\(text)")
            #expect(text.contains(c.says), "\(text)")
            #expect(text.contains("Restore the journal from a backup, or move it away"))
        }
        // Nothing was cut off or rewritten: the operator finds the file as it was.
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(c.bytes))
    }

    @Test func aTornLastLineIsCutOffButNotATornLineOfGarbage() throws {
        let path = temporaryFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data((Self.good + "\n{\"type\":\"rese").utf8).write(to: URL(fileURLWithPath: path))
        let server = try TestServer { $0.journalPath = path }
        server.server.stop()
        #expect(try String(contentsOfFile: path, encoding: .utf8).hasPrefix(Self.good + "\n"))
        #expect(!(try String(contentsOfFile: path, encoding: .utf8)).contains("rese"))

        try Data((Self.good + "\n\u{1}\u{2}binary").utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: JournalDamaged.self) { _ = try TestServer { $0.journalPath = path } }
        #expect(JournalLoader.isTornLine(Array(#"{"typ"#.utf8)))
        #expect(JournalLoader.isTornLine(Array(#"{"type":"record","panel":"de"#.utf8)))
        #expect(!JournalLoader.isTornLine(Array(#"{"tipe":"#.utf8)))
        #expect(!JournalLoader.isTornLine([0, 0, 0]))
    }

    /// A journal that is there but cannot be opened is not an empty journal.
    @Test func aJournalThatCannotBeOpenedIsNotTakenForEmpty() throws {
        let path = temporaryFile()
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: (any Error).self) { _ = try JournalLoader.load(path: path, keep: 10) }
        let absent = try JournalLoader.load(path: temporaryFile(), keep: 10)
        #expect(absent.lines == 0 && absent.lastFences.isEmpty)
    }

    /// Two servers on one journal would both hand out the same fences.
    @Test func aSecondServerOnTheSameJournalDoesNotStart() throws {
        let path = temporaryFile()
        defer {
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: path + ".lock")
        }
        let first = try TestServer {
            $0.journalPath = path
            $0.journalMaxBytes = 65_536
            $0.commandsPerSecond = 0
        }
        do {
            _ = try TestServer { $0.journalPath = path }
            Issue.record("a second server started on the same journal")
        } catch let inUse as JournalInUse {
            #expect(inUse.pid == getpid())
            #expect(inUse.description.contains("journal \(path) is in use by process \(getpid())"))
            #expect(inUse.description.contains(path + ".lock"))
        }
        // Compaction renames a new file over the journal; the lock is on another file.
        let c = try first.client(name: "busy")
        for _ in 0..<500 {
            c.send("DOWN demo b1\nUP demo b1")
            _ = try c.expect("OK UP")
        }
        #expect(throws: JournalInUse.self) { _ = try TestServer { $0.journalPath = path } }
        // The lock follows a symlink to the journal.
        let link = temporaryFile()
        defer { try? FileManager.default.removeItem(atPath: link) }
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        #expect(throws: JournalInUse.self) { _ = try TestServer { $0.journalPath = link } }

        first.server.shutdown()
        // The lock is dropped when shutdown returns, but an flock belongs to the open file,
        // and a test elsewhere in this process that spawns a binary shares every open file
        // with its child between fork and exec; on a loaded machine that window once
        // outlasted shutdown. So the test waits, up to 5 s, for the kernel to give the lock
        // to a blocking flock of its own (the moment the last copy is closed), drops it,
        // and then starts the next server.
        let released = DispatchSemaphore(value: 0)
        let lockFD = open(path + ".lock", O_RDWR | O_CLOEXEC)
        #expect(lockFD >= 0)
        Thread.detachNewThread {
            while flock(lockFD, LOCK_EX) != 0 && errno == EINTR {}
            flock(lockFD, LOCK_UN)
            close(lockFD)
            released.signal()
        }
        #expect(released.wait(timeout: .now() + 5) == .success, "the journal stayed locked 5 s after its server shut down")
        let next = try? TestServer { $0.journalPath = path }
        #expect(next != nil, "the journal was locked again after its server shut down")
        next?.server.stop()
    }
}
