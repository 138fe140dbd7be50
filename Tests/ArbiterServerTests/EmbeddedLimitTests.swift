import ArbiterCore
import ArbiterWire
@testable import ArbiterServer
import Testing

/// Limits and timeouts on the embedded server: no sockets, a manual clock, no sleeping.
@Suite("limits and timeouts, socket-free")
struct EmbeddedLimitTests {
    @Test func aSilentPeerIsWelcomedAfter200ms() throws {
        let server = try EmbeddedServer()
        let c = server.connect()
        server.advance(milliseconds: 199)
        #expect(c.lines().isEmpty)
        server.advance(milliseconds: 1)
        #expect(c.lines() == ["WELCOME session=s1 name=guest-1 proto=1"])
    }

    @Test func aPeerThatSpeaksFirstIsWelcomedAtOnce() throws {
        let server = try EmbeddedServer()
        let c = server.connect()
        c.send("PING now\n")
        #expect(c.lines() == ["WELCOME session=s1 name=guest-1 proto=1", "PONG now"])
        // The deadline passing later changes nothing.
        server.advance(milliseconds: 500)
        #expect(c.lines().isEmpty)
    }

    @Test func excessCommandsAreRateLimitedAndTheBucketRefills() throws {
        let server = try EmbeddedServer {
            $0.commandsPerSecond = 10
            $0.commandBurst = 5
        }
        let c = server.connect()
        c.send((1...8).map { "PING \($0)\n" }.joined())
        let replies = c.lines().dropFirst()
        #expect(Array(replies.prefix(5)) == (1...5).map { "PONG \($0)" })
        #expect(replies.dropFirst(5).allSatisfy { $0.hasPrefix("ERROR rate-limited") })
        #expect(replies.count == 8)
        // 10 a second: one more token after 100 ms, not before.
        server.advance(milliseconds: 99)
        c.send("PING early\n")
        #expect(c.lines().first?.hasPrefix("ERROR rate-limited") == true)
        server.advance(milliseconds: 101)
        c.send("PING later\n")
        #expect(c.lines() == ["PONG later"])
        #expect(server.state.metrics.rateLimited.load(ordering: .relaxed) == 4)
    }

    @Test func aRateLimitedDownIsCountedOnce() throws {
        let server = try EmbeddedServer {
            $0.commandsPerSecond = 1
            $0.commandBurst = 1
        }
        let c = server.connect()
        c.send("DOWN demo b1\nDOWN demo b2\nUP demo b1\n")
        #expect(
            Array(c.lines().dropFirst()) == [
                "GRANTED demo b1 fence=1",
                "ERROR rate-limited over 1 commands at once or 1 a second; this one was dropped",
                "OK UP demo b1",
            ])
        #expect(server.state.metrics.rateLimited.load(ordering: .relaxed) == 1)
    }

    @Test func idleLinePeersAreSaidGoodbyeAfterTheTimeout() throws {
        let server = try EmbeddedServer { $0.idleTimeoutMs = 300 }
        let c = server.connect()
        c.send("PING\n")
        _ = c.lines()
        server.advance(milliseconds: 300)
        #expect(c.lines().isEmpty)
        #expect(!c.isClosed)
        server.advance(milliseconds: 1)
        #expect(c.lines() == ["OK BYE reason=idle"])
        #expect(c.isClosed)
    }

    @Test func halfAHeadIsAnswered408AfterTheTimeout() throws {
        let server = try EmbeddedServer { $0.headTimeoutMs = 300 }
        let c = server.connect()
        c.send("GET / HTTP/1.1\r\nHost: slow")
        server.advance(milliseconds: 300)
        #expect(c.output().isEmpty)
        server.advance(milliseconds: 1)
        let response = String(decoding: c.output(), as: UTF8.self)
        #expect(response.hasPrefix("HTTP/1.1 408"))
        #expect(c.isClosed)
    }

    @Test func silentWebSocketsArePingedThenDropped() throws {
        let server = try EmbeddedServer {
            $0.webSocketPingIntervalMs = 200
            $0.webSocketPongTimeoutMs = 200
        }
        let c = server.connect()
        c.send(
            "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        #expect(String(decoding: c.output(), as: UTF8.self).hasPrefix("HTTP/1.1 101"))
        server.advance(milliseconds: 201)
        #expect(c.output() == WebSocketFrameEncoder.pingFrame())
        // A reply (any bytes) resets it: a masked pong.
        c.send([0x8A, 0x80, 1, 2, 3, 4])
        server.advance(milliseconds: 150)
        #expect(c.output().isEmpty)
        server.advance(milliseconds: 51)
        #expect(c.output() == WebSocketFrameEncoder.pingFrame())
        server.advance(milliseconds: 200)
        #expect(!c.isClosed)
        server.advance(milliseconds: 1)
        #expect(c.isClosed)
    }

    @Test func aHoldButtonFiresOnTheManualClock() throws {
        let server = try EmbeddedServer()
        let c = server.connect()
        c.send("JOIN demo\nDOWN demo sos\n")
        #expect(c.lines().contains { $0.hasPrefix("GRANTED demo sos") })
        server.advance(milliseconds: 2_999)
        #expect(!c.lines().contains { $0.hasPrefix("RELEASED demo sos") })
        server.advance(milliseconds: 1)
        #expect(c.lines().contains { $0.hasPrefix("RELEASED demo sos reason=fired owner=guest-1") })
    }
}
