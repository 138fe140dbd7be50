import ArbiterTestSupport
import Foundation
import Testing

@Suite("limits: rate, connections, idle, slow consumers")
struct LimitTests {
    /// Found by arbiter-load: a rate-limited UP left the button held. Releases are
    /// never limited.
    @Test func releasesAreNeverRateLimited() throws {
        let server = try TestServer {
            $0.commandsPerSecond = 1
            $0.commandBurst = 1
        }
        let c = try LineClient(port: server.port)
        c.send("DOWN demo b1\nUP demo b1\nDOWN demo b2\nCANCEL demo b2")
        _ = try c.expect("WELCOME")
        #expect(try c.readLine() == "GRANTED demo b1 fence=1")
        #expect(try c.readLine() == "OK UP demo b1")
        #expect(try c.readLine().hasPrefix("ERROR rate-limited"))
        #expect(try c.readLine() == "ERROR not-owner b2 is not held by you")
        let other = try LineClient(port: server.port)
        other.send("JOIN demo")
        let snapshot = try other.readLines(through: "OK JOIN")
        #expect(snapshot.contains("BUTTON demo b1 kind=tap group=main state=idle owner=- progress=0.000 owner_session=-"))
    }

    @Test func pastMaxConnectionsLinePeersAndHTTPAreTurnedAway() throws {
        let server = try TestServer { $0.maxConnections = 2 }
        let a = try server.client()
        let b = try server.client()
        let c = try LineClient(port: server.port)
        c.send("PING")
        #expect(try c.readLine().hasPrefix("ERROR server-full"))
        #expect(c.waitForClose())
        let h = try RawSocket(port: server.port)
        h.send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(try h.readHead().hasPrefix("HTTP/1.1 503"))
        a.send("PING a")
        b.send("PING b")
        #expect(try a.readLine() == "PONG a")
        #expect(try b.readLine() == "PONG b")
    }

    @Test func monitoringIsAnsweredOnAFullServer() throws {
        let server = try TestServer {
            $0.maxConnections = 2
            $0.monitoringReserve = 2
        }
        let a = try server.client()
        let b = try server.client()
        // Held open: the reserve is counted by open connections.
        let health = try RawSocket(port: server.port)
        health.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let healthz = try health.readResponse()
        #expect(healthz.head.hasPrefix("HTTP/1.1 200"))
        #expect(healthz.head.contains("Connection: close"))
        #expect(healthz.body == "ok\n")
        let scrape = try RawSocket(port: server.port)
        scrape.send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let metrics = try scrape.readResponse()
        #expect(metrics.head.hasPrefix("HTTP/1.1 200"))
        #expect(metrics.body.contains("arbiter_server_full_total 2"))
        let page = try RawSocket(port: server.port)
        page.send("GET /api/panels HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(try page.readHead().hasPrefix("HTTP/1.1 503"))
        a.send("PING a")
        b.send("PING b")
        #expect(try a.readLine() == "PONG a")
        #expect(try b.readLine() == "PONG b")
    }

    @Test func pastTheReserveEvenMonitoringIsRefused() throws {
        let server = try TestServer {
            $0.maxConnections = 1
            $0.monitoringReserve = 1
        }
        let a = try server.client()
        let held = try LineClient(port: server.port)  // silent: holds the one reserve place
        let health = try RawSocket(port: server.port)
        health.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(try health.readHead().hasPrefix("HTTP/1.1 503"))
        _ = held
        a.send("PING a")
        #expect(try a.readLine() == "PONG a")
    }

    @Test func aReaderThatStallsIsCutOffWhileOthersAreServed() throws {
        let server = try TestServer(panels: [Panels.quick]) {
            $0.maxOutboundBytes = 64 * 1024
            $0.commandsPerSecond = 0
            $0.socketSendBufferBytes = 16 * 1024
        }
        let staller = try LineClient(port: server.port, receiveBuffer: 4096)
        staller.send("HELLO staller\nJOIN t\nDOWN t talk")
        _ = try staller.expect("GRANTED t talk")
        let watcher = try server.member("watcher", panel: "t")
        let presser = try server.client(name: "presser")
        // The staller stops reading; every press makes events for it, and its unsent
        // output grows until it passes the bound.
        var slowest = 0.0
        var cut = false
        let deadline = Date().addingTimeInterval(30)
        for round in 0..<200_000 where Date() < deadline {
            let started = Date()
            // Fifty presses a round: several MB must pile up behind the kernel's buffers.
            presser.send(String(repeating: "DOWN t b1\nUP t b1\n", count: 50) + "PING \(round)")
            _ = try presser.expect("PONG \(round)")
            slowest = max(slowest, Date().timeIntervalSince(started))
            watcher.readAvailable()
            if watcher.received.contains(where: { $0.hasPrefix("RELEASED t talk reason=disconnect owner=staller") }) {
                cut = true
                break
            }
        }
        #expect(cut, "the stalled reader was disconnected and its talk button released")
        #expect(slowest < 1.0, "the presser was never held up (slowest round trip \(slowest)s)")
        presser.send("DOWN t talk")
        #expect(try presser.expect("GRANTED").hasPrefix("GRANTED t talk"))
        let metrics = try RawSocket(port: server.port)
        metrics.send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(try metrics.readResponse().body.contains("arbiter_slow_consumer_drops_total 1"))
    }

    /// All peers together may not queue more than the total budget: the largest backlog
    /// is cut first, what it held is released, and smaller ones stay.
    @Test func theLargestBacklogIsCutWhenAllPeersTogetherHaveTooMuch() throws {
        let server = try TestServer(panels: [Panels.quick]) {
            $0.maxOutboundBytes = 8 << 20
            $0.maxTotalOutboundBytes = 512 * 1024
            $0.commandsPerSecond = 0
            $0.socketSendBufferBytes = 16 * 1024
        }
        let big = try LineClient(port: server.port, receiveBuffer: 4096)
        big.send("HELLO big\nJOIN t\nDOWN t talk")
        _ = try big.expect("GRANTED t talk")
        let watcher = try server.member("watcher", panel: "t")
        let presser = try server.client(name: "presser")
        var small: LineClient?
        var cut = false
        let deadline = Date().addingTimeInterval(30)
        for round in 0..<2000 where Date() < deadline {
            if round == 30 {
                // Joins later: its backlog stays smaller than big's by what came before.
                let late = try LineClient(port: server.port, receiveBuffer: 4096)
                late.send("HELLO small\nJOIN t")
                _ = try late.expect("OK JOIN t")
                small = late
            }
            presser.send(String(repeating: "DOWN t b1\nUP t b1\n", count: 50) + "PING \(round)")
            _ = try presser.expect("PONG \(round)")
            watcher.readAvailable()
            if watcher.received.contains(where: { $0.hasPrefix("RELEASED t talk reason=disconnect owner=big") }) {
                cut = true
                break
            }
        }
        #expect(cut, "the largest backlog was cut and its talk button released")
        #expect(big.waitForClose(timeout: 5))
        let survivor = try #require(small)
        survivor.send("PING alive")
        #expect(try survivor.expect("PONG alive", timeout: 10) == "PONG alive", "the smaller backlog was kept")
        let metrics = try RawSocket(port: server.port)
        metrics.send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let body = try metrics.readResponse().body
        #expect(body.contains("arbiter_output_budget_cuts_total 1"))
        #expect(body.contains("arbiter_slow_consumer_drops_total 0"))
        #expect(body.contains("arbiter_output_queued_bytes "))
    }
}
