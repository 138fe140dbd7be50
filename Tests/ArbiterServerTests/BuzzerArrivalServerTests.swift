import ArbiterCore
import ArbiterIO
import ArbiterTestSupport
import Testing

@testable import ArbiterServer

/// A buzzer round on the server: presses ranked by when their bytes arrived, each reply
/// in its place among its session's answers, and lockouts by player.
@Suite("buzzer arrival order and lockouts on the server")
struct BuzzerArrivalServerTests {
    static let windowed: PanelConfig = {
        var panel = Panels.fair
        panel.groups["quiz"] = .buzzer(earlyLockoutMs: 200, decisionWindowUs: 2000)
        return panel
    }()

    /// The early press's lockout holds for a new connection of the same player (its name
    /// from the same address) right after ARM; not for someone else.
    @Test func theLockoutFollowsThePlayerToANewConnection() throws {
        let server = try EmbeddedServer(panels: [Panels.fair])
        let first = server.connect(from: "10.0.0.7")
        first.send("HELLO alice\nDOWN f red\n")
        #expect(first.lines().last == "DENIED f red reason=early")
        let host = server.connect(from: "10.0.0.1")
        host.send("HELLO host\nARM f quiz\n")
        #expect(host.lines().last == "OK ARM f quiz")
        let again = server.connect(from: "10.0.0.7")
        again.send("HELLO alice\nDOWN f red\n")
        #expect(again.lines().last == "DENIED f red reason=locked-out")
        let other = server.connect(from: "10.0.0.8")
        other.send("HELLO bob\nDOWN f blue\n")
        #expect(other.lines().last == "GRANTED f blue fence=1")
        server.advance(milliseconds: 200)
        again.send("DOWN f red\n")
        #expect(again.lines().last?.hasPrefix("RANKED f red rank=2 after_us=") == true)
    }

    /// The press read second arrived first: once the window has passed it wins, and the
    /// session read first is ranked behind it; that session's PING, sent after its DOWN,
    /// is answered after its RANKED.
    @Test func thePressThatArrivedFirstWinsAndRepliesKeepTheirOrder() throws {
        let server = try EmbeddedServer(panels: [Self.windowed])
        let host = server.connect()
        host.send("HELLO host\nJOIN f\nARM f quiz\n")
        _ = host.lines()
        server.advance(milliseconds: 10)
        let alice = server.connect(from: "10.0.0.7")
        alice.send("HELLO alice\n")
        let bob = server.connect(from: "10.0.0.8")
        bob.send("HELLO bob\n")
        _ = alice.lines() + bob.lines()
        alice.send("DOWN f red\nPING\n", arrivedMicrosecondsAgo: 0)
        // Read after alice's, by a reactor that got to it 300 µs late.
        bob.send("DOWN f blue\n", arrivedMicrosecondsAgo: 300)
        #expect(alice.lines().filter { !$0.hasPrefix("WELCOME") && !$0.hasPrefix("OK HELLO") }.isEmpty)
        #expect(bob.lines().filter { !$0.hasPrefix("WELCOME") && !$0.hasPrefix("OK HELLO") }.isEmpty)
        server.advance(milliseconds: 3)
        #expect(bob.lines() == ["GRANTED f blue fence=1"])
        #expect(alice.lines() == ["RANKED f red rank=2 after_us=300", "PONG"])
        let events = host.lines().filter { !$0.hasPrefix("JOINED") }
        #expect(events.map { $0.split(separator: " ").first ?? "" } == ["PRESSED", "FIRED", "BUZZED"])
        #expect(events.last?.contains("name=alice") == true)
    }

    /// A JSON DOWN's reply keeps its id when it comes after the window, and the winner's
    /// UP sent meanwhile is answered after it.
    @Test func aDeferredReplyKeepsItsFormAndWhatFollowsWaitsBehindIt() throws {
        let server = try EmbeddedServer(panels: [Self.windowed])
        let host = server.connect()
        host.send("HELLO host\nARM f quiz\n")
        server.advance(milliseconds: 10)
        let alice = server.connect(from: "10.0.0.7")
        alice.send("HELLO alice\n")
        _ = alice.lines()
        alice.send(#"{"cmd":"down","panel":"f","button":"red","id":7}"# + "\nUP f red\n")
        #expect(alice.lines().isEmpty)
        server.advance(milliseconds: 3)
        #expect(alice.lines() == [#"{"type":"granted","panel":"f","button":"red","fence":1,"id":7}"#, "OK UP f red"])
    }

    /// Presses that arrived before the ARM was read are early, even when read after it.
    @Test func aPressThatArrivedBeforeTheArmIsEarly() throws {
        let server = try EmbeddedServer(panels: [Self.windowed])
        let host = server.connect()
        host.send("HELLO host\nARM f quiz\n")
        let alice = server.connect(from: "10.0.0.7")
        alice.send("HELLO alice\n")
        _ = alice.lines()
        server.advance(milliseconds: 1)
        alice.send("DOWN f red\n", arrivedMicrosecondsAgo: 1500)
        #expect(alice.lines() == ["DENIED f red reason=early"])
    }

    /// The core's count of presses ranked later than their window is a metric.
    @Test func latePressesAreCountedInTheMetrics() throws {
        let server = try EmbeddedServer(panels: [Self.windowed])
        let host = server.connect()
        host.send("HELLO host\nARM f quiz\n")
        server.advance(milliseconds: 10)
        let alice = server.connect(from: "10.0.0.7")
        alice.send("HELLO alice\nDOWN f red\n")
        server.advance(milliseconds: 3)
        let bob = server.connect(from: "10.0.0.8")
        bob.send("HELLO bob\n")
        bob.send("DOWN f blue\n", arrivedMicrosecondsAgo: 3500)
        #expect(bob.lines().last == "RANKED f blue rank=2 after_us=0")
        let metrics = MetricsPage(server: server.state).render()
        #expect(metrics.contains("arbiter_buzzer_late_presses_total 1"))
    }
}
