import ArbiterTestSupport
import Foundation
import Testing

/// Garbage, floods, stalls and kills at once, while honest clients work: the honest
/// ones must be served all along, see one gapless order, and nothing stays held.
@Suite("abuse")
struct AbuseTests {
    @Test func everyOtherClientIsServedAndNothingIsLost() throws {
        let server = try TestServer(panels: [Panels.quick]) {
            $0.maxOutboundBytes = 64 * 1024
            $0.socketSendBufferBytes = 16 * 1024
            // Honest clients send a few thousand commands a second; the flood is far more.
            $0.commandsPerSecond = 20000
            $0.commandBurst = 200
        }
        let watcher = try server.member("watcher", panel: "t")
        let honest = try (0..<3).map { try server.client(name: "honest\($0)") }

        // Garbage: random bytes, bad UTF-8, half HTTP heads, oversized lines.
        var garbage: [RawSocket] = []
        for i in 0..<6 {
            let s = try RawSocket(port: server.port)
            var bytes = (0..<3000).map { _ in UInt8.random(in: 0...255) }
            if i == 0 { bytes = Array("GET / HTTP/1.1\r\nHost: half".utf8) }
            if i == 1 { bytes = Array(String(repeating: "z", count: 100_000).utf8) }
            s.send(bytes)
            garbage.append(s)
        }
        // A flood: thousands of commands without reading a reply.
        let flooder = try server.client(name: "flooder")
        flooder.send(String(repeating: "DOWN t b2\nUP t b2\n", count: 5000))
        // A stall: a member that never reads again, holding the talk button.
        let staller = try LineClient(port: server.port, receiveBuffer: 4096)
        staller.send("HELLO staller\nJOIN t\nDOWN t talk")
        // Kills: clients that press and vanish.
        for i in 0..<5 {
            let victim = try LineClient(port: server.port)
            victim.send("HELLO victim\(i)\nDOWN t sos")
            victim.close()
        }

        var roundTrips: [Double] = []
        var grants = 0
        for round in 0..<300 {
            for (i, c) in honest.enumerated() {
                let started = Date()
                c.send("DOWN t b1\nUP t b1\nPING \(round)-\(i)")
                let lines = try c.readLines(through: "PONG \(round)-\(i)")
                roundTrips.append(Date().timeIntervalSince(started))
                grants += lines.filter { $0.hasPrefix("GRANTED") }.count
            }
            watcher.readAvailable()
        }
        roundTrips.sort()
        let p99 = roundTrips[roundTrips.count * 99 / 100]
        let worst = roundTrips.last ?? 0
        print(
            "abuse: \(roundTrips.count) honest round trips, p50 \(Int(roundTrips[roundTrips.count / 2] * 1e6)) µs, "
                + "p99 \(Int(p99 * 1e6)) µs, max \(Int(worst * 1e6)) µs, \(grants) grants")
        #expect(grants > 100, "honest clients got grants under contention")
        #expect(worst < 2.0, "no honest round trip was held up (max \(worst)s)")

        // Everything ends released; the watcher's stream is one gapless order.
        for c in honest { c.send("UP t b1") }
        flooder.close()
        for c in garbage { _ = c.waitForClose(timeout: 0.01) }
        let closer = try server.client(name: "closer")
        closer.send("RESET t")
        _ = try closer.expect("OK RESET")
        watcher.send("PING end")
        _ = try watcher.expect("PONG end", timeout: 20)
        let events = watcher.received.filter { $0.contains(" seq=") && !$0.hasPrefix("OK ") }
        let seqs = events.compactMap { field("seq", of: $0) }.compactMap(Int.init)
        #expect(!seqs.isEmpty && seqs == Array(seqs[0]...seqs[seqs.count - 1]), "the watcher saw every event, in order")
        var held: [String: String] = [:]
        for e in events {
            guard let button = e.split(separator: " ").dropFirst(2).first.map(String.init) else { continue }
            if e.hasPrefix("PRESSED") { held[button] = e }
            if e.hasPrefix("RELEASED") { held[button] = nil }
        }
        #expect(held.isEmpty, "nothing stays held: \(held)")
        #expect(
            events.contains { $0.hasPrefix("RELEASED t talk reason=disconnect owner=staller") },
            "the stalled member was cut off and its button released")
        #expect(events.filter { $0.hasPrefix("RELEASED t sos") }.count >= 1)
    }
}
