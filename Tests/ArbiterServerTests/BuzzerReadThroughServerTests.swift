import ArbiterCore
import ArbiterTestSupport
import Testing

@testable import ArbiterServer

/// Two reactors on real sockets and the real clock, kernel stamps on: a buzzer press is
/// ranked once both reactors have read through its arrival, long before its window would
/// have ended. The window is 5 s, past what a config may say (100 ms), so that a loaded
/// or sanitized run whose reactors stall for a while still ranks by read-through.
@Suite("buzzer presses ranked once both reactors read through them")
struct BuzzerReadThroughServerTests {
    @Test func pressesOnBothReactorsAreRankedOnceReadThroughInSendOrder() throws {
        var panel = Panels.fair
        panel.groups["quiz"] = .buzzer(earlyLockoutMs: 0, decisionWindowUs: 5_000_000)
        let server = try TestServer(panels: [panel]) { $0.reactorCount = 2 }
        // Sessions go to the reactors in turn: the host and bob to one, alice to the other.
        let host = try server.client(name: "host")
        let alice = try server.client(name: "alice")
        let bob = try server.client(name: "bob")
        host.send("ARM f quiz")
        _ = try host.expect("OK ARM f quiz")
        alice.send("DOWN f red")
        bob.send("DOWN f blue")
        _ = try alice.expect("GRANTED f red")
        #expect(try bob.expect("RANKED f blue rank=2").hasPrefix("RANKED"))
        let s = try RawSocket(port: server.port)
        s.send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let metrics = try s.readResponse().body
        #expect(metrics.contains(#"arbiter_buzzer_ranked_total{by="read-through"} 2"#), "\(metrics)")
        #expect(metrics.contains(#"arbiter_buzzer_ranked_total{by="window"} 0"#))
        #expect(metrics.contains("arbiter_buzzer_late_presses_total 0"))
        #expect(metrics.contains("arbiter_arrival_behind_read_mark_total "), "\(metrics)")
        #expect(metrics.contains("arbiter_arrival_behind_read_mark_max_us "))
    }
}
