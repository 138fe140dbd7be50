import ArbiterCore
@testable import ArbiterServer
import ArbiterTestSupport
import Foundation
import Testing

/// A press naming a button its panel lacks is looked up once, by the host, and answered
/// for what it is: nothing could be granted, so the journal is not even asked.
@Suite struct UnknownButtonTests {
    @Test func anUnknownButtonIsNoSuchButtonEvenWhileTheJournalFails() throws {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("journal-unknown-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let disk = FaultyDisk()
        let server = try disk.server(journal: path)
        let c = try server.client(name: "presser")
        disk.failWrites(ENOSPC)
        c.send("DOWN demo nope")
        #expect(try c.readLine() == "ERROR no-such-button no button nope on panel demo; its buttons: b1, b2, b3, sos, talk")
        c.send(#"{"cmd":"up","panel":"demo","button":"nope","id":3}"#)
        #expect(try c.readLine().contains(#""code":"no-such-button""#))
        c.send("DOWN demo b1")
        #expect(try c.readLine().hasPrefix("ERROR unavailable"))
        server.server.stop()
    }
}
