import ArbiterCore
@testable import ArbiterJournal
@testable import ArbiterServer
import ArbiterTestSupport
import Foundation
import Testing

/// A failing disk never makes fences repeat: a press whose fence or records cannot be
/// made durable is refused with `ERROR unavailable`, nobody sees it, and the server
/// recovers by itself once the disk works again.
@Suite("journal on a failing disk")
struct JournalFailureTests {
    func temporaryFile() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("journal-fail-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).jsonl").path
    }

    /// A journal whose reserved block is used up: the next DOWN must reserve first.
    func seededJournal(fence: Int = 5) throws -> String {
        let path = temporaryFile()
        let lines = [
            #"{"type":"reserve","panel":"demo","upto":\#(fence)}"#,
            #"{"type":"record","panel":"demo","button":"b1","event":"pressed","at":1,"owner":"x","session":"s1","fence":\#(fence),"seq":1}"#,
        ]
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    func metrics(_ server: TestServer) throws -> String {
        let s = try RawSocket(port: server.port)
        s.send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        return try s.readResponse().body
    }

    enum Fault: String, CaseIterable, Sendable {
        case enospc, eio, fdatasync
        func apply(to disk: FaultyDisk) {
            switch self {
            case .enospc: disk.failWrites(ENOSPC)
            case .eio: disk.failWrites(EIO)
            case .fdatasync: disk.failSyncs(EIO)
            }
        }
    }

    @Test(arguments: Fault.allCases)
    func aReservationThatCannotBeMadeDurableRefusesThePress(fault: Fault) throws {
        let path = try seededJournal()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let disk = FaultyDisk()
        do {
            let server = try disk.server(journal: path)
            let watcher = try server.member("watcher")
            let c = try server.client(name: "presser")
            fault.apply(to: disk)
            for _ in 0..<3 {
                c.send("DOWN demo b1")
                let reply = try c.readLine()
                #expect(reply.hasPrefix("ERROR unavailable the journal cannot be written"), "\(reply)")
                #expect(reply.contains("try again"))
            }
            // JSON form too.
            c.send(#"{"cmd":"down","panel":"demo","button":"b2","id":7}"#)
            let json = try c.readLine()
            #expect(json.hasPrefix(#"{"type":"error","code":"unavailable","message":"#) && json.hasSuffix(#","id":7}"#), "\(json)")
            // Nobody saw a grant: the watcher's next line is the answer to its own PING.
            watcher.send("PING after")
            #expect(try watcher.readLine() == "PONG after")
            var page = try metrics(server)
            #expect(page.contains("arbiter_journal_unavailable_total 4"))
            #expect(page.contains("arbiter_journal_healthy 0"))

            disk.heal()
            c.send("DOWN demo b1")
            #expect(try c.expect("GRANTED") == "GRANTED demo b1 fence=6")
            page = try metrics(server)
            #expect(page.contains("arbiter_journal_healthy 1"))
            #expect(page.contains("arbiter_journal_unavailable_total 4"))
            server.server.stop()
        }
        // What the failed writes left was cut off: the journal loads, and fences go on.
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil })
        let again = try TestServer { $0.journalPath = path }
        let c = try again.client()
        c.send("DOWN demo b2")
        #expect(Int(field("fence", of: try c.expect("GRANTED"))!)! > 6)
    }

    /// With --journal-sync a DOWN's records must be durable before its GRANTED: a sync
    /// that fails undoes the grant unseen, and the button is not left taken.
    @Test func aSyncedRecordThatFailsUndoesTheGrant() throws {
        let path = temporaryFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let disk = FaultyDisk()
        let server = try disk.server(journal: path, sync: true)
        let watcher = try server.member("watcher")
        let c = try server.client(name: "presser")
        // The reservation's sync works, the record's does not.
        disk.failSyncs(EIO, after: 1)
        c.send("DOWN demo b1")
        #expect(try c.readLine().hasPrefix("ERROR unavailable"))
        #expect(disk.syncs == 2)
        watcher.send("PING x")
        #expect(try watcher.readLine() == "PONG x")
        #expect(!(try String(contentsOfFile: path, encoding: .utf8)).contains(#""event":"pressed""#))

        disk.heal()
        let other = try server.client(name: "other")
        other.send("DOWN demo b2")
        // The group was not left taken, and the refused grant's fence was never seen.
        #expect(try other.expect("GRANTED") == "GRANTED demo b2 fence=1")
        #expect(try watcher.expect("PRESSED").hasPrefix("PRESSED demo b2 owner=other"))
        #expect(try String(contentsOfFile: path, encoding: .utf8).contains(#""event":"pressed""#))
    }

    /// Releases never wait for the disk: an UP while the journal fails still frees the
    /// button, and members see it.
    @Test func aReleaseGoesThroughWhileTheDiskFails() throws {
        let path = temporaryFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let disk = FaultyDisk()
        let server = try disk.server(journal: path)
        let watcher = try server.member("watcher")
        let c = try server.client(name: "presser")
        c.send("DOWN demo b1")
        _ = try c.expect("GRANTED demo b1 fence=1")
        disk.failWrites(ENOSPC)
        c.send("UP demo b1")
        #expect(try c.readLine() == "OK UP demo b1")
        _ = try watcher.expect("RELEASED demo b1 reason=up owner=presser fence=1")
        disk.heal()
        c.send("DOWN demo b2")
        #expect(try c.expect("GRANTED") == "GRANTED demo b2 fence=2")
    }

    /// A failed reservation sync on one panel ends with a sync on any panel: another
    /// panel whose block still has room syncs its records while it probes, and its
    /// presses work again without waiting for the first panel's next press.
    @Test func aSyncFailureEndsThroughAnyPanel() throws {
        let path = temporaryFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let lines = [#"{"type":"reserve","panel":"demo","upto":5}"#, #"{"type":"reserve","panel":"t","upto":1000}"#]
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        let disk = FaultyDisk()
        let server = try disk.server(journal: path, panels: [.demo, Panels.quick])
        let c = try server.client(name: "presser")
        disk.failSyncs(EIO)
        c.send("DOWN demo b1")
        #expect(try c.readLine().hasPrefix("ERROR unavailable"))
        c.send("DOWN t b1")
        #expect(try c.readLine().hasPrefix("ERROR unavailable"), "a write without a sync does not prove the disk")
        disk.heal()
        let syncs = disk.syncs
        c.send("DOWN t b1")
        #expect(try c.expect("GRANTED") == "GRANTED t b1 fence=1001")
        #expect(disk.syncs == syncs + 1)
        #expect(try metrics(server).contains("arbiter_journal_healthy 1"))
        c.send("UP t b1\nDOWN t b2")
        #expect(try c.expect("GRANTED") == "GRANTED t b2 fence=1002")
        #expect(disk.syncs == syncs + 1, "records are not synced without --journal-sync once healthy")
    }

    /// While the journal is failing, presses do not each hit the disk: one per retry
    /// interval tries it, the others are refused at once.
    @Test func retriesAreBounded() throws {
        let path = try seededJournal()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let disk = FaultyDisk()
        let server = try disk.server(journal: path, retryMs: 600_000)
        let c = try server.client(name: "presser")
        disk.failWrites(ENOSPC)
        c.send("DOWN demo b1")
        #expect(try c.readLine().hasPrefix("ERROR unavailable"))
        let writes = disk.writes
        disk.heal()
        for _ in 0..<5 {
            c.send("DOWN demo b1")
            #expect(try c.readLine().hasPrefix("ERROR unavailable"))
        }
        #expect(disk.writes == writes, "refused presses did not touch the disk")
        #expect(try metrics(server).contains("arbiter_journal_unavailable_total 6"))
    }

    @Test func healthEpisodesAndTheirRetryRate() {
        var h = JournalHealth(retryIntervalMs: 1000)
        let admitted = h.admits(nowMs: 0)
        #expect(h.isHealthy && admitted)
        var changed = h.fail(errno: ENOSPC, sync: false, nowMs: 100)
        #expect(changed)
        changed = h.fail(errno: ENOSPC, sync: false, nowMs: 150)
        #expect(!changed, "one episode, one start")
        #expect(!h.isHealthy)
        // One try per interval from the last failure on.
        let tries = [150, 1149, 1150, 1151, 2149, 2150].map { h.admits(nowMs: $0) }
        #expect(tries == [false, false, true, false, false, true])
        changed = h.succeed(synced: false)
        #expect(changed)
        changed = h.succeed(synced: false)
        #expect(!changed, "one episode, one end")
        // A failed sync is only cured by a sync that works.
        changed = h.fail(errno: EIO, sync: true, nowMs: 5000)
        #expect(changed)
        changed = h.succeed(synced: false)
        #expect(!changed && !h.isHealthy)
        changed = h.succeed(synced: true)
        #expect(changed && h.isHealthy)
    }
}
