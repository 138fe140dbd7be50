import ArbiterCluster
import ArbiterClusterRuntime
@testable import ArbiterClusterServer
@testable import ArbiterServer
import ArbiterClusterTestSupport
import ArbiterTestSupport
import Testing

/// What a relay acceptor refuses, seen from a raw socket on a server with the hand-off
/// hook: the `RELAY-REFUSED` line, the close, the log line, the count, and nothing
/// delivered.
@Suite("relay refusals")
struct RelayRefusalTests {
    static let nonce = [UInt8](repeating: 7, count: RelayProof.nonceBytes)

    /// A dialer's hello, as any node would send it (the hello does not depend on the key).
    static var hello: [UInt8] {
        RelayDialer(node: "intruder", key: [], nonce: nonce).hello
    }

    func expectRefused(_ node: RelayTestNode, reason: String, socketsLeft: Int = 0) {
        #expect(eventually { node.network.statistics.refusals == 1 && !node.logLines(containing: "relay link refused").isEmpty })
        let logged = node.logLines(containing: "relay link refused")
        #expect(logged.count == 1)
        #expect(logged.first?.contains("peer=127.0.0.1:") == true)
        #expect(logged.first?.contains(reason) == true, "\(logged)")
        #expect(node.received.isEmpty)
        #expect(node.seen.withLock { $0.ups.isEmpty })
        #expect(eventually { node.network.statistics.sockets == socketsLeft })
    }

    @Test func aNewerLinkFromTheSameNodeReplacesTheOlder() throws {
        let b = try RelayTestNode("n2")
        let first = try #require(try RelayRawClient.linked(to: b, as: "n1"))
        first.send(RelayFrameEncoder.encode(.sessionGone(origin: "n1", session: 1)))
        #expect(eventually { b.received.count == 1 })
        // n1 restarted, say, and its old socket is not known to be dead yet.
        let second = try #require(try RelayRawClient.linked(to: b, as: "n1"))
        #expect(first.waitForClose())
        second.send(RelayFrameEncoder.encode(.sessionGone(origin: "n1", session: 2)))
        #expect(eventually { b.received.count == 2 })
        // The new link is up before the old one is down: n1 never looks gone.
        #expect(eventually { b.seen.withLock { $0.links } == ["up n1", "up n1", "down n1"] })
        #expect(b.network.linkCount == 1)
        #expect(b.logLines(containing: "relay link down").first?.contains("a newer link from the same node replaced it") == true)
    }

    @Test func aNodeWithAnotherKeyGetsNoLinkAndNothingIsDelivered() throws {
        let a = try RelayTestNode("n1", key: Array("the wrong key".utf8))
        let b = try RelayTestNode("n2")
        a.send(.sessionGone(origin: "n1", session: 1), to: b)
        // The dialer checks the acceptor's proof first and leaves without giving its own.
        #expect(eventually { a.network.statistics.dialFailures == 1 })
        // The failure is counted before it is logged: wait for the line, not the count.
        #expect(eventually { !a.logLines(containing: "relay dial failed").isEmpty })
        #expect(a.logLines(containing: "relay dial failed").first?.contains("proof of the cluster key is wrong") == true)
        expectRefused(b, reason: "the peer closed the connection")
        #expect(eventually { a.network.statistics.dropped == 1 })
        #expect(a.seen.withLock { $0.ups.isEmpty && $0.downs.isEmpty })
    }

    @Test func aWrongProofFollowedByFramesIsRefusedAndNoFrameIsDelivered() throws {
        let b = try RelayTestNode("n2")
        let socket = try RelayRawClient(port: b.port)
        socket.send(Self.hello)
        #expect(try socket.line().hasPrefix("RELAY-CHALLENGE 1 n2 "))
        let frames = RelayTestNode.messages(7, tag: "x").flatMap(RelayFrameEncoder.encode)
        socket.send(Array("RELAY-PROOF \(String(repeating: "0", count: 64))\n".utf8) + frames)
        #expect(try socket.line() == "RELAY-REFUSED the peer's proof of the cluster key is wrong")
        #expect(socket.waitForClose())
        expectRefused(b, reason: "proof of the cluster key is wrong")
    }

    @Test func framesInsteadOfAProofAreRefused() throws {
        let b = try RelayTestNode("n2")
        let socket = try RelayRawClient(port: b.port)
        let frames = RelayTestNode.messages(7, tag: "x").flatMap(RelayFrameEncoder.encode)
        // In one write: the acceptor reads the frames where the proof line should be, and
        // refuses before it even answers the hello.
        socket.send(Self.hello + frames)
        let refusal = try socket.line()
        #expect(refusal.hasPrefix("RELAY-REFUSED not a relay peer: expected RELAY-PROOF") || refusal.hasPrefix("RELAY-REFUSED handshake line longer"))
        #expect(socket.waitForClose())
        expectRefused(b, reason: "RELAY-")
    }

    @Test func aNodeUnderThisNodesOwnNameIsRefusedEvenWithTheKey() throws {
        let b = try RelayTestNode("n2")
        let socket = try RelayRawClient(port: b.port)
        var twin = RelayDialer(node: "n2", key: RelayTestNode.key, nonce: Self.nonce)
        socket.send(twin.hello)
        let challenge = try socket.line()
        guard case .established(_, let proof, _) = try twin.receive(Array((challenge + "\n").utf8)) else {
            Issue.record("no proof for \(challenge)")
            return
        }
        socket.send(proof)
        #expect(try socket.line() == "RELAY-REFUSED not a relay peer: the peer uses this node's own name")
        #expect(socket.waitForClose())
        expectRefused(b, reason: "own name")
    }

    @Test func garbageAfterRelayIsRefused() throws {
        let b = try RelayTestNode("n2")
        let socket = try RelayRawClient(port: b.port)
        socket.send("RELAY-GARBAGE please\n")
        #expect(try socket.line() == "RELAY-REFUSED not a relay peer: expected RELAY-HELLO 1")
        #expect(socket.waitForClose())
        expectRefused(b, reason: "expected RELAY-HELLO 1")
    }

    @Test func aHandshakeTooSlowIsRefused() throws {
        var options = RelayOptions()
        options.handshakeTimeoutMs = 300
        let b = try RelayTestNode("n2", options: options)
        let socket = try RelayRawClient(port: b.port)
        socket.send(Self.hello)
        #expect(try socket.line().hasPrefix("RELAY-CHALLENGE 1 n2 "))
        #expect(try socket.line() == "RELAY-REFUSED handshake not finished within 300 ms")
        #expect(socket.waitForClose())
        expectRefused(b, reason: "handshake not finished within 300 ms")
    }

    @Test func handshakesPastTheBoundAreRefusedAtOnce() throws {
        var options = RelayOptions()
        options.maxPendingHandshakes = 2
        // The bound in all alone: no slot kept for nodes, none per address (RelayFloodTests).
        options.handshakesReservedForNodes = 0
        options.maxPendingHandshakesPerAddress = 2
        let b = try RelayTestNode("n2", options: options)
        let state = try #require(b.server?.server.stateForTesting)
        let first = try RelayRawClient(port: b.port)
        let second = try RelayRawClient(port: b.port)
        first.send("RELAY-HELLO")
        second.send("RELAY-HELLO")
        // Both handed to the relay, neither finished.
        #expect(eventually { state.metrics.value(.connectionsClosed) == 2 })
        let third = try RelayRawClient(port: b.port)
        third.send("RELAY-HELLO")
        #expect(try third.line() == "RELAY-REFUSED busy: 2 relay handshakes under way")
        #expect(third.waitForClose())
        // The two under way keep their sockets until they finish or time out.
        expectRefused(b, reason: "busy", socketsLeft: 2)
    }

    @Test func withoutTheHookARelayHelloIsAnUnknownCommand() throws {
        let server = try TestServer()
        let client = try LineClient(port: server.port)
        client.sendRaw(Self.hello)
        _ = try client.expect("WELCOME")
        #expect(try client.expect("ERROR").hasPrefix("ERROR unknown-command RELAY-HELLO is not a command"))
        client.send("PING still")
        #expect(try client.expect("PONG") == "PONG still")
    }

    @Test func aServerWithTheHookServesLineHTTPAndWebSocketPeersAsBefore() throws {
        let node = try RelayTestNode("n2")
        let port = node.port
        let alice = try LineClient(port: port)
        alice.send("HELLO alice")
        #expect(try alice.readLine() == "WELCOME session=s1 name=guest-1 proto=1")
        #expect(try alice.readLine() == "OK HELLO name=alice session=s1 role=admin")
        alice.send("JOIN demo")
        #expect(try alice.expect("OK JOIN") == "OK JOIN demo members=1 fence=0 seq=0")
        #expect(try alice.readLine() == "JOINED demo name=alice session=s1 seq=1")
        // A silent peer is still greeted after the WELCOME delay.
        let silent = try LineClient(port: port)
        #expect(try silent.readLine() == "WELCOME session=s2 name=guest-2 proto=1")
        let http = try RawSocket(port: port)
        http.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let response = try http.readResponse()
        #expect(response.head.hasPrefix("HTTP/1.1 200"))
        #expect(response.body == "ok\n")
        let ws = try WebSocketClient(port: port, path: "/ws?panel=demo&name=bob")
        #expect(try ws.readText() == #"{"type":"welcome","session":"s4","name":"bob","proto":1}"#)
        ws.sendText(#"{"cmd":"down","panel":"demo","button":"b1","id":"c1"}"#)
        _ = try ws.readTexts(through: #""re":"join""#)
        #expect(try alice.expect("JOINED") == "JOINED demo name=bob session=s4 seq=2")
        #expect(try alice.expect("PRESSED") == "PRESSED demo b1 owner=bob session=s4 fence=1 seq=3")
        #expect(node.network.statistics.refusals == 0)
    }
}
