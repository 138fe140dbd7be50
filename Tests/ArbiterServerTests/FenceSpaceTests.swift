import ArbiterCore
import ArbiterTestSupport
import Foundation
import Testing

/// Fences are UInt64 end to end, and a panel whose fences run out refuses rather than
/// wrap or repeat.
@Suite("a panel's fence space, past 2^63 and to its end")
struct FenceSpaceTests {
    func journal(upTo: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("journal-u64-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).jsonl").path
        try Data(#"{"type":"reserve","panel":"demo","upto":\#(upTo)}"#.utf8 + [0x0A]).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func fencesPast2To63StayExactAcrossRestarts() throws {
        let path = try journal(upTo: "9223372036854775806")
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let server = try TestServer { $0.journalPath = path }
            let c = try server.client(name: "big")
            for expected in ["9223372036854775807", "9223372036854775808", "9223372036854775809"] {
                c.send("DOWN demo b1\nUP demo b1")
                #expect(try c.expect("GRANTED") == "GRANTED demo b1 fence=\(expected)")
                _ = try c.expect("OK UP")
            }
            // PRESSED, FIRED and RELEASED of each grant, each with its own fence.
            c.send("HISTORY demo 9")
            let history = try c.readLines(through: "OK HISTORY")
            let fences = history.compactMap { field("fence", of: $0) }
            #expect(fences == ["9223372036854775807", "9223372036854775808", "9223372036854775809"].flatMap { [$0, $0, $0] })
            c.send(#"{"cmd":"join","panel":"demo"}"#)
            let snapshot = try c.readLines(through: #"{"type":"ok""#)
            #expect(snapshot.last?.contains(#""fence":9223372036854775809"#) == true)
            server.server.shutdown()
        }
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains(#"{"type":"reserve","panel":"demo","upto":9223372036854776806}"#))
        #expect(text.contains(#""fence":9223372036854775809,"#))
        let again = try TestServer { $0.journalPath = path }
        let c = try again.client()
        c.send("DOWN demo b1")
        #expect(try c.expect("GRANTED") == "GRANTED demo b1 fence=9223372036854776807")
        c.send("HISTORY demo 3")
        #expect(try c.readLines(through: "OK HISTORY").contains { $0.contains("fence=9223372036854775809") })
    }

    @Test func theLastFenceIsHandedOutOnceThenPressesAreRefused() throws {
        let path = try journal(upTo: "18446744073709551614")
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let server = try TestServer { $0.journalPath = path }
            let c = try server.client(name: "last")
            c.send("DOWN demo b1")
            #expect(try c.expect("GRANTED") == "GRANTED demo b1 fence=18446744073709551615")
            c.send("UP demo b1 fence=18446744073709551615")
            _ = try c.expect("OK UP")
            c.send("DOWN demo b2")
            let refused = try c.readLine()
            #expect(refused.hasPrefix("ERROR unavailable panel demo has handed out fence 18446744073709551615, the last there is"), "\(refused)")
            c.send("HISTORY demo 2")
            #expect(try c.readLines(through: "OK HISTORY").allSatisfy { !$0.hasPrefix("RECORD") || $0.contains("fence=18446744073709551615") })
            server.server.shutdown()
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8).contains(#""upto":18446744073709551615}"#))
        // After a restart too: never wrapped to 0 or 1.
        let again = try TestServer { $0.journalPath = path }
        let c = try again.client()
        c.send("DOWN demo b1")
        #expect(try c.readLine().hasPrefix("ERROR unavailable panel demo has handed out fence 18446744073709551615"))
    }
}
