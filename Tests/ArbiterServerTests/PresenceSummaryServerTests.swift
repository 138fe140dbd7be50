import ArbiterCore
import ArbiterWire
@testable import ArbiterServer
import Testing

/// Presence of a large panel through the server, socket-free on a manual clock: named up
/// to the size, then counted in one PRESENCE per tick, the joiner's own JOINED in its
/// reply.
@Suite("presence summaries, socket-free")
struct PresenceSummaryServerTests {
    func server() throws -> EmbeddedServer {
        var panel = PanelConfig.demo
        panel.presenceSummaryAbove = 2
        return try EmbeddedServer(panels: [panel])
    }

    func member(_ server: EmbeddedServer, _ name: String) -> EmbeddedConnection {
        let c = server.connect()
        c.send("HELLO \(name)\nJOIN demo\n")
        return c
    }

    @Test func aboveTheSizeJoinsAreCountedAndTheJoinerHearsItsOwn() throws {
        let server = try server()
        let alice = member(server, "alice")
        let bob = member(server, "bob")
        #expect(alice.lines().last == "JOINED demo name=bob session=s2 seq=2")
        _ = bob.lines()
        let carol = member(server, "carol")
        let joined = carol.lines()
        #expect(Array(joined.suffix(2)) == ["OK JOIN demo members=3 fence=0 seq=2", "JOINED demo name=carol session=s3"])
        #expect(alice.lines().isEmpty)
        server.advance(milliseconds: 99)
        #expect(alice.lines().isEmpty)
        server.advance(milliseconds: 1)
        #expect(alice.lines() == ["PRESENCE demo members=3 joined=1 left=0 seq=3"])
        #expect(bob.lines() == ["PRESENCE demo members=3 joined=1 left=0 seq=3"])
        #expect(carol.lines() == ["PRESENCE demo members=3 joined=1 left=0 seq=3"])
    }

    @Test func aMassDisconnectCostsEachMemberOneLinePerTick() throws {
        let server = try server()
        let stay = member(server, "stay")
        let leavers = (0..<40).map { member(server, "k\($0)") }
        server.advance(milliseconds: 100)
        _ = stay.lines()
        for c in leavers { c.send("QUIT\n") }
        server.advance(milliseconds: 100)
        // 40 leaves: named only once the panel is back to its size, counted before.
        let lines = stay.lines()
        #expect(lines.filter { $0.hasPrefix("PRESENCE") }.count == 1)
        #expect(lines.filter { $0.hasPrefix("LEFT") }.count == 1)
        #expect(lines.count == 2)
    }
}
