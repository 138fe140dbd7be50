import ArbiterCore
import ArbiterTestSupport
import Foundation
import Testing

@Suite("every line-peer error, and the connection stays open")
struct ErrorCodeTests {
    @Test func errorsAreClearAndLoseNothing() throws {
        let server = try TestServer(panels: [.demo, Panels.keyed])
        let c = try server.client(name: "eve")
        let other = try server.client(name: "other")
        other.send("DOWN demo b1")
        _ = try other.expect("GRANTED")
        let cases: [(String, String)] = [
            ("DOWN demo", "ERROR bad-syntax"),
            ("DWN demo b1", "ERROR unknown-command"),
            ("JOIN nope", "ERROR no-such-panel"),
            ("DOWN demo nope", "ERROR no-such-button"),
            ("KICK s99", "ERROR no-such-session"),
            ("UP demo b1", "ERROR not-owner"),
            ("UP demo b1 fence=7", "ERROR stale-fence"),
            ("JOIN k", "ERROR forbidden"),
            ("HISTORY k", "ERROR forbidden"),
            ("UP k b1", "ERROR forbidden"),
            ("DOWN k b1", "DENIED k b1 reason=forbidden"),
            // Whether a button exists on a panel one may not press is not told.
            ("DOWN k nope", "DENIED k nope reason=forbidden"),
            ("CANCEL k nope", "ERROR forbidden"),
            ("HELLO eve key=wrong", "ERROR forbidden"),
            (String(repeating: "x", count: 5000), "ERROR line-too-long"),
        ]
        for (command, expected) in cases {
            c.send(command)
            let reply = try c.readLine()
            #expect(reply.hasPrefix(expected), "\(command.prefix(30)) -> \(reply)")
        }
        c.sendRaw(Array("PING ".utf8) + [0xC3, 0x28] + [0x0A])
        #expect(try c.readLine().hasPrefix("ERROR bad-utf8"))
        c.send("HELLO eve key=pr3ss")
        #expect(try c.readLine() == "OK HELLO name=eve session=s1 role=admin")
        c.send("DOWN k b1")
        #expect(try c.readLine() == "GRANTED k b1 fence=1")
        c.send("RESET k")
        #expect(try c.readLine() == "ERROR forbidden RESET needs the admin key of panel k")
        c.send("PING still-here")
        #expect(try c.readLine() == "PONG still-here")
    }

    @Test func kickNeedsTheAdminLevelOnTheVictimsPanels() throws {
        // demo has no keys, so everyone is its admin; that must not reach panel k.
        let server = try TestServer(panels: [.demo, Panels.keyed])
        let presser = try server.client(name: "presser")
        presser.send("HELLO presser key=pr3ss")
        #expect(try presser.readLine() == "OK HELLO name=presser session=s1 role=admin")
        presser.send("DOWN k b1")
        #expect(try presser.readLine() == "GRANTED k b1 fence=1")
        let eve = try server.client(name: "eve")
        eve.send("KICK s1")
        #expect(try eve.readLine() == "ERROR forbidden KICK s1 needs the admin key of panel k")
        presser.send("PING kept")
        #expect(try presser.readLine() == "PONG kept")
        let boss = try server.client(name: "boss")
        boss.send("HELLO boss key=adm1n")
        _ = try boss.expect("OK HELLO")
        boss.send("JOIN k")
        _ = try boss.expect("BUTTON k b1 kind=tap group=main state=pressed owner=presser")
        boss.send("KICK s1")
        _ = try boss.expect("OK KICK s1")
        #expect(try boss.expect("RELEASED k b1").hasPrefix("RELEASED k b1 reason=disconnect owner=presser fence=1"))
    }

    @Test func longLineIsSkippedToItsEnd() throws {
        let server = try TestServer()
        let c = try server.client()
        c.sendRaw(Array(String(repeating: "y", count: 70_000).utf8))
        c.send(" tail of the same line\nPING ok")
        #expect(try c.readLine().hasPrefix("ERROR line-too-long"))
        #expect(try c.readLine() == "PONG ok")
    }

    @Test func unknownCommandSuggestsAndPointsToHelp() throws {
        let server = try TestServer()
        let c = try server.client()
        c.send("JION demo")
        let reply = try c.readLine()
        #expect(reply.contains("JOIN"))
        #expect(reply.contains("HELP"))
        c.send("help")
        let help = try c.readLines(through: "OK HELP")
        #expect(help.dropLast().allSatisfy { $0.hasPrefix("# ") })
        #expect(help.contains { $0.hasPrefix("# DOWN <panel> <button>") })
    }
}
