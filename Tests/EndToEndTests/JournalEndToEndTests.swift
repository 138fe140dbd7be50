import ArbiterTestSupport
import Foundation
import Testing

/// The journal's promises against the real binary: a damaged file stops the start
/// (78), a journal in use stops a second server (1), and a full disk never makes a
/// fence repeat.
@Suite("end to end: the journal", .serialized)
struct JournalEndToEndTests {
    func temporaryPath(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
    }

    @Test func aDamagedJournalExits78NamingTheFileAndLine() throws {
        let journal = temporaryPath("damaged")
        defer { try? FileManager.default.removeItem(atPath: journal) }
        let lines = [
            #"{"type":"record","panel":"demo","button":"b1","event":"pressed","at":1,"owner":"x","session":"s1","fence":41,"seq":1}"#,
            #"{"type":"reserve","panel":"demo","upto":1e30}"#,
        ]
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: journal))
        let result = try ArbiterProcess.run(["--port", "0", "--journal", journal])
        #expect(result.status == 78)
        #expect(
            result.stderr.contains("error: journal \(journal), line 2: \"upto\" must be a whole number from 0 to 18446744073709551615, not 1e30"),
            "\(result.stderr)")
        #expect(result.stderr.contains("Restore the journal from a backup, or move it away"))
        #expect(!result.stderr.contains("msg=listening"))
    }

    @Test func aSecondServerOnOneJournalExits1NamingTheHolder() throws {
        let journal = temporaryPath("shared")
        defer {
            try? FileManager.default.removeItem(atPath: journal)
            try? FileManager.default.removeItem(atPath: journal + ".lock")
        }
        let first = try ArbiterProcess(["--port", "0", "--journal", journal])
        let second = try ArbiterProcess.run(["--port", "0", "--journal", journal])
        #expect(second.status == 1)
        #expect(second.stderr.contains("journal \(journal) is in use by process \(first.process.processIdentifier)"), "\(second.stderr)")
        #expect(try String(contentsOfFile: journal + ".lock", encoding: .utf8) == "\(first.process.processIdentifier)\n")
        // The first one still serves, and after kill -9 the lock is gone with it.
        let c = try LineClient(port: first.port)
        c.send("DOWN demo b1")
        #expect(try c.expect("GRANTED") == "GRANTED demo b1 fence=1")
        kill(first.process.processIdentifier, SIGKILL)
        // Generous: a deadline for a loaded machine (the suite runs in parallel), not a target.
        _ = try first.waitForExit(timeout: 20)
        let next = try ArbiterProcess(["--port", "0", "--journal", journal])
        next.terminate()
        _ = try next.waitForExit(timeout: 20)
    }

    /// A hard link to a live server's journal is another name with a lock of its own: the
    /// second server would hand out the first one's fences again. It stops instead, as for
    /// any bad configuration, naming the path.
    @Test func aHardLinkedJournalExits78NamingThePath() throws {
        let journal = temporaryPath("linked")
        let link = journal + "-link"
        defer {
            for path in [journal, journal + ".lock", link, link + ".lock"] { try? FileManager.default.removeItem(atPath: path) }
        }
        let first = try ArbiterProcess(["--port", "0", "--journal", journal])
        defer { first.terminate() }
        #expect(Glibc.link(journal, link) == 0)
        let second = try ArbiterProcess.run(["--port", "0", "--journal", link])
        #expect(second.status == 78)
        #expect(second.stderr.contains("error: journal \(link) is one of 2 names for the same file (a hard link)"), "\(second.stderr)")
        #expect(!second.stderr.contains("msg=listening"))
    }

    /// The issue's reproduction on a real 200 KB tmpfs: grants, a full disk, presses
    /// refused (never granted), the disk freed, presses again, kill -9, restart: the
    /// first fence is above every fence seen.
    @Test func aFullDiskNeverMakesFencesRepeat() throws {
        guard getuid() == 0 else {
            print("aFullDiskNeverMakesFencesRepeat: skipped, mounting a tmpfs needs root (CI runs as root)")
            return
        }
        let directory = temporaryPath("fulldisk")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=200k", "tmpfs", directory]) == 0, "mount a 200 KB tmpfs")
        defer { _ = try? Self.run("/bin/umount", ["-l", directory]) }
        let journal = directory + "/journal.jsonl"
        let filler = directory + "/filler"

        var arbiter = try ArbiterProcess(["--port", "0", "--journal", journal, "--rate", "0"])
        defer { arbiter.terminate() }
        var c = try Self.client(arbiter.port)
        var seen: UInt64 = 0
        for _ in 0..<5 {
            c.send("DOWN demo b1\nUP demo b1")
            seen = max(seen, UInt64(field("fence", of: try c.expect("GRANTED"))!)!)
            _ = try c.expect("OK UP")
        }

        // Fill the disk to the last byte.
        let fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        #expect(fd >= 0)
        let chunk = [UInt8](repeating: 0x78, count: 512)
        var filled = 0
        for _ in 0..<10_000 {
            let n = chunk.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            filled += n
        }
        for _ in 0..<512 where (chunk.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, 1) }) == 1 {}
        close(fd)
        #expect(filled > 0)

        // The journal's last page may still have room for a few records: presses until
        // the first refusal, then never a grant while the disk stays full.
        var refusals = 0
        var grantedWhileFull = 0
        for _ in 0..<1500 {
            c.send("DOWN demo b1")
            let reply = try c.readLine()
            if reply.hasPrefix("GRANTED") {
                #expect(refusals == 0, "granted after a refusal while the disk is full: \(reply)")
                seen = max(seen, UInt64(field("fence", of: reply)!)!)
                grantedWhileFull += 1
                c.send("UP demo b1")
                _ = try c.expect("OK UP")
            } else {
                #expect(reply.hasPrefix("ERROR unavailable the journal cannot be written (No space left on device)"), "\(reply)")
                refusals += 1
            }
        }
        print("full disk: \(grantedWhileFull) granted in the last page's room, then \(refusals) refused")
        #expect(refusals >= 1400, "\(refusals) refused, \(grantedWhileFull) granted in the last page's room")
        var page = try Self.metrics(arbiter.port)
        #expect(page.contains("arbiter_journal_unavailable_total \(refusals)"))
        #expect(page.contains("arbiter_journal_healthy 0"))

        // Free the disk: within a few retry intervals presses work again.
        try FileManager.default.removeItem(atPath: filler)
        var granted: String?
        for _ in 0..<100 {
            c.send("DOWN demo b2")
            let reply = try c.readLine()
            if reply.hasPrefix("GRANTED") {
                granted = reply
                break
            }
            #expect(reply.hasPrefix("ERROR unavailable"))
            // Real time on purpose: a failed journal lets one press try the disk per retry
            // interval (1 s, not an option of the binary), on the process's own clock;
            // nothing but a press shows it has passed.
            usleep(50_000)
        }
        let fence = try #require(granted.flatMap { field("fence", of: $0) }.flatMap { UInt64($0) }, "presses work again")
        #expect(fence > seen)
        seen = fence
        page = try Self.metrics(arbiter.port)
        #expect(page.contains("arbiter_journal_healthy 1"))
        // One log line when the episode starts, one when it ends.
        #expect(arbiter.stderrContains("msg=\"journal available again\""))
        #expect(arbiter.stderr.components(separatedBy: "msg=\"journal unavailable;").count == 2, "\(arbiter.stderr)")
        #expect(arbiter.stderr.components(separatedBy: "msg=\"journal available again\"").count == 2)

        kill(arbiter.process.processIdentifier, SIGKILL)
        _ = try arbiter.waitForExit(timeout: 5)
        arbiter = try ArbiterProcess(["--port", "0", "--journal", journal])
        c = try Self.client(arbiter.port)
        c.send("DOWN demo b3")
        let after = UInt64(field("fence", of: try c.expect("GRANTED"))!)!
        #expect(after > seen, "first fence after the restart \(after), highest seen \(seen)")
        arbiter.terminate()
        _ = try arbiter.waitForExit(timeout: 5)
    }

    static func client(_ port: UInt16) throws -> LineClient {
        let c = try LineClient(port: port)
        c.send("HELLO e2e")
        _ = try c.expect("OK HELLO")
        return c
    }

    static func metrics(_ port: UInt16) throws -> String {
        let s = try RawSocket(port: port)
        s.send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        return try s.readResponse().body
    }

    static func run(_ tool: String, _ arguments: [String]) throws -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = arguments
        try p.run()
        p.waitUntilExit()
        return p.terminationStatus
    }
}
