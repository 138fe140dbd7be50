import ArbiterCluster
import ArbiterClusterTestSupport
import ArbiterTestSupport
import Dispatch
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// Relay handshakes that never finish, from strangers on other loopback addresses
/// (127.0.0.2 and up), against a node whose registered nodes dial from 127.0.0.1: the
/// bounds per address and for strangers, the slots kept for nodes, and the log kept to a
/// few lines however many are refused.
@Suite("relay handshake floods")
struct RelayFloodTests {
    /// A connection from `source` that sent its hello and was challenged: it holds a slot.
    static func stalled(_ node: RelayTestNode, from source: String) throws -> RelayRawClient {
        let client = try RelayRawClient(port: node.port, source: source)
        client.send(RelayRefusalTests.hello)
        let challenge = try client.line()
        #expect(challenge.hasPrefix("RELAY-CHALLENGE 1 "), "\(source): \(challenge)")
        return client
    }

    /// The refusal a connection from `source` gets for its hello.
    static func refusal(_ node: RelayTestNode, from source: String) throws -> String {
        let client = try RelayRawClient(port: node.port, source: source)
        client.send(RelayRefusalTests.hello)
        let line = try client.line()
        #expect(client.waitForClose())
        return line
    }

    static var options: RelayOptions {
        var options = RelayOptions()
        options.maxPendingHandshakes = 8
        options.maxPendingHandshakesPerAddress = 2
        options.handshakesReservedForNodes = 2
        // The stalled connections hold their slots for the whole test.
        options.handshakeTimeoutMs = 30_000
        return options
    }

    @Test func aRegisteredNodesAddressGetsASlotWhenStrangersHoldAllTheOthers() throws {
        let b = try RelayTestNode("n2", options: Self.options, nodeAddresses: ["127.0.0.1:7070"])
        // Strangers from three addresses take the 6 slots that are not kept for nodes.
        let stalled = try ["127.0.0.2", "127.0.0.3", "127.0.0.4"].flatMap { source in try (0..<2).map { _ in try Self.stalled(b, from: source) } }
        #expect(b.network.statistics.sockets == 6)
        #expect(try Self.refusal(b, from: "127.0.0.2") == "RELAY-REFUSED busy: 2 relay handshakes under way from 127.0.0.2")
        #expect(try Self.refusal(b, from: "127.0.0.5") == "RELAY-REFUSED busy: 6 relay handshakes under way from addresses of no registered node")
        // A node of the cluster still links, and so would a second one.
        let node = try #require(try RelayRawClient.linked(to: b, as: "n1"))
        #expect(eventually { b.seen.withLock { $0.ups } == ["n1"] })
        node.send(RelayFrameEncoder.encode(.sessionGone(origin: "n1", session: 1)))
        #expect(eventually { b.received.count == 1 })
        let second = try Self.stalled(b, from: "127.0.0.1")
        #expect(eventually { b.network.statistics.refusals == 2 })
        #expect(b.network.statistics.sockets == 8)
        _ = (stalled, second)
    }

    @Test func withoutRegisteredNodesStrangersGetAllButTheReserve() throws {
        let b = try RelayTestNode("n2", options: Self.options)
        let stalled = try ["127.0.0.2", "127.0.0.3", "127.0.0.4"].flatMap { source in try (0..<2).map { _ in try Self.stalled(b, from: source) } }
        // 127.0.0.1 is nobody's advertised address here: a stranger like the others.
        #expect(try Self.refusal(b, from: "127.0.0.1") == "RELAY-REFUSED busy: 6 relay handshakes under way from addresses of no registered node")
        _ = stalled
    }

    @Test func refusalsAreLoggedOncePerEpisodeWithTheirCount() throws {
        var options = Self.options
        options.maxPendingHandshakesPerAddress = 1
        options.refusalLogIntervalMs = 500
        let b = try RelayTestNode("n2", options: options)
        let stalled = try Self.stalled(b, from: "127.0.0.2")
        let started = DispatchTime.now().uptimeNanoseconds
        let refused = 60
        for _ in 0..<refused {
            #expect(try Self.refusal(b, from: "127.0.0.2") == "RELAY-REFUSED busy: 1 relay handshakes under way from 127.0.0.2")
        }
        #expect(b.network.statistics.refusals == refused)
        // The episode ends one quiet interval after the last refusal, saying its total.
        #expect(eventually { !b.logLines(containing: "relay handshake refusals ended").isEmpty })
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        let lines = b.logLines(containing: "reason=\"busy:")
        let first = lines.filter { $0.contains("msg=\"relay link refused\"") }
        let summaries = lines.filter { $0.contains("msg=\"relay handshakes refused\"") }
        let ended = lines.filter { $0.contains("msg=\"relay handshake refusals ended\"") }
        // At most the first line, and two per interval (a summary, an end and a new first).
        #expect(lines.count <= 1 + 2 * (Int(elapsed / 0.5) + 1), "\(lines.count) lines in \(elapsed) s")
        #expect(lines.count < 10, "\(lines)")
        #expect(first.count >= 1 && !summaries.isEmpty && !ended.isEmpty, "\(lines)")
        #expect(first.first?.contains("peer=127.0.0.2:") == true)
        // Every refusal is accounted for: each episode's first line, then the counts.
        let counted = summaries.compactMap { field("count", of: $0).flatMap(Int.init) }.reduce(0, +)
        #expect(first.count + counted == refused, "\(lines)")
        // One episode, unless the machine stalled for a whole interval between two.
        if first.count == 1 { #expect(ended.first.flatMap { field("total", of: $0) } == "\(refused)", "\(ended)") }
        _ = stalled
    }
}
