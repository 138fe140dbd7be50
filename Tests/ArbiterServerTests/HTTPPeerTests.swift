import ArbiterCore
import ArbiterTestSupport
import ArbiterWire
import Foundation
import Testing

@Suite("HTTP peers on the same port")
struct HTTPPeerTests {
    @Test func healthzAndKeepAlivePipelining() throws {
        let server = try TestServer()
        let s = try RawSocket(port: server.port)
        s.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\nGET /nope HTTP/1.1\r\nHost: localhost\r\n\r\nHEAD /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let first = try s.readResponse()
        #expect(first.head.hasPrefix("HTTP/1.1 200"))
        #expect(first.head.contains("Connection: keep-alive"))
        #expect(first.body == "ok\n")
        #expect(try s.readResponse().head.hasPrefix("HTTP/1.1 404"))
        let head = try s.readHead()
        #expect(head.hasPrefix("HTTP/1.1 200"))
        #expect(!first.body.contains("WELCOME"), "an HTTP peer never sees WELCOME")
    }

    @Test func statusCodes() throws {
        let server = try TestServer()
        func status(_ request: String) throws -> String {
            let s = try RawSocket(port: server.port)
            s.send(request)
            return String(try s.readHead().prefix(12))
        }
        #expect(try status("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") == "HTTP/1.1 200")
        #expect(try status("GET /panel/demo HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") == "HTTP/1.1 200")
        #expect(try status("GET /panel/nope HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") == "HTTP/1.1 404")
        #expect(try status("POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\nhi") == "HTTP/1.1 405")
        #expect(try status("DELETE / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") == "HTTP/1.1 405")
        #expect(try status("GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") == "HTTP/1.1 426")
        #expect(try status("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX: " + String(repeating: "a", count: 9000) + "\r\n\r\n") == "HTTP/1.1 431")
        #expect(try status("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nbad header\r\n\r\n") == "HTTP/1.1 400")
    }

    @Test func indexListsEveryPanelAsALinkInItsHTML() throws {
        let tricky = PanelConfig(
            id: "quiz", title: #"<b>Tom & "Jerry"</b>'s"#,
            buttons: [ButtonConfig(id: "r", kind: .tap), ButtonConfig(id: "g", kind: .tap)])
        let server = try TestServer(panels: [.demo, Panels.keyed, tricky])
        let s = try RawSocket(port: server.port)
        s.send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let response = try s.readResponse()
        #expect(response.head.hasPrefix("HTTP/1.1 200"))
        #expect(
            response.body.contains(
                #"<li data-panel="demo"><a class="panel-link" href="/panel/demo"><span class="panel-title">Demo</span><span class="panel-meta">demo · 5 buttons</span></a></li>"#
            ))
        #expect(response.body.contains(#"href="/panel/k"><span class="panel-title">k</span><span class="panel-meta">k · needs a view key</span>"#))
        // The title is text, never markup: a title with <, &, " and ' cannot break out.
        #expect(response.body.contains(#"<span class="panel-title">&lt;b&gt;Tom &amp; &quot;Jerry&quot;&lt;/b&gt;&#39;s</span>"#))
        #expect(!response.body.contains("<b>Tom"))
        #expect(!response.body.contains("<!--panels-->"), "the marker is replaced")
        // The private panel's buttons stay unnamed, as in /api/panels without its key.
        #expect(!response.body.contains("1 button"))
    }

    @Test func apiPanelsShowsLiveState() throws {
        let server = try TestServer()
        let alice = try server.client(name: "alice")
        alice.send("DOWN demo b2")
        _ = try alice.expect("GRANTED")
        let s = try RawSocket(port: server.port)
        s.send("GET /api/panels HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let response = try s.readResponse()
        #expect(response.head.contains("Content-Type: application/json"))
        let json = try JSONParser.parse(Array(response.body.utf8))
        guard case .array(let panels)? = json["panels"], case .array(let buttons)? = panels.first?["buttons"] else {
            Issue.record("no panels array: \(response.body)")
            return
        }
        #expect(panels.first?["id"] == .string("demo"))
        #expect(panels.first?["fence"] == .number("1"))
        let b2 = buttons.first { $0["id"] == .string("b2") }
        #expect(b2?["state"] == .string("pressed"))
        #expect(b2?["owner"] == .string("alice"))
        #expect(buttons.first { $0["id"] == .string("b1") }?["state"] == .string("locked"))
        #expect(buttons.first { $0["id"] == .string("sos") }?["label"] == .string("SOS 緊急"))
        // A hold has no timeout, so none is shown; a tap's is.
        #expect(buttons.first { $0["id"] == .string("sos") }?["timeout_ms"] == nil)
        #expect(buttons.first { $0["id"] == .string("b1") }?["timeout_ms"] == .number("10000"))
    }

    @Test func apiPanelsOnlyNamesPanelsThatNeedAViewKey() throws {
        let server = try TestServer(panels: [.demo, Panels.keyed])
        let owner = try server.client(name: "secretowner")
        owner.send("HELLO secretowner key=pr3ss")
        _ = try owner.expect("OK HELLO")
        owner.send("DOWN k b1")
        _ = try owner.expect("GRANTED")
        let s = try RawSocket(port: server.port)
        s.send("GET /api/panels HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let body = try s.readResponse().body
        #expect(!body.contains("secretowner"))
        let json = try JSONParser.parse(Array(body.utf8))
        guard case .array(let panels)? = json["panels"] else {
            Issue.record("no panels array: \(body)")
            return
        }
        #expect(panels.count == 2)
        #expect(panels.last?["id"] == .string("k") && panels.last?["private"] == .bool(true))
        #expect(panels.last?["buttons"] == .array([]) && panels.last?["members"] == nil)
        #expect(panels.first?["private"] == nil && panels.first?["members"] != nil)
        // With the view key as a bearer token (how a kiosk given the key asks), in full.
        s.send("GET /api/panels HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer v1ew\r\n\r\n")
        let keyed = try s.readResponse().body
        #expect(keyed.contains(#""id":"k""#) && keyed.contains("secretowner") && !keyed.contains(#""private""#))
        s.send("GET /api/panels HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer wrong\r\n\r\n")
        #expect(!(try s.readResponse().body).contains("secretowner"))
    }

    @Test func metricsCountWhatHappened() throws {
        let server = try TestServer()
        let alice = try server.client(name: "alice")
        alice.send("DOWN demo b1\nDOWN demo b1\nUP demo b1")
        _ = try alice.expect("OK UP")
        let bob = try server.client(name: "bob")
        bob.send("DOWN demo b1\nDOWN demo b2")
        _ = try bob.expect("DENIED")
        let s = try RawSocket(port: server.port)
        s.send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let body = try s.readResponse().body
        #expect(body.contains("arbiter_grants_total 2"))
        #expect(body.contains("arbiter_denials_total 1"))
        #expect(body.contains("arbiter_releases_total{reason=\"up\"} 1"))
        #expect(body.contains("# TYPE arbiter_command_seconds histogram"))
        #expect(body.contains("arbiter_command_seconds_count 5"))
        #expect(body.contains("arbiter_connections 3"))
    }

    @Test func kioskPageIsEmbedded() throws {
        let server = try TestServer()
        let s = try RawSocket(port: server.port)
        s.send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let response = try s.readResponse()
        #expect(response.head.contains("text/html"))
        #expect(response.body.contains("<html"))
    }
}

@Suite("Host and Origin checks over loopback")
struct HostOriginServerTests {
    func response(_ server: TestServer, _ request: String) throws -> (head: String, body: String) {
        let s = try RawSocket(port: server.port)
        s.send(request)
        return try s.readResponse()
    }

    @Test func foreignHostsGet421AndMissingHost400() throws {
        let server = try TestServer()
        let rebound = try response(server, "GET /api/panels HTTP/1.1\r\nHost: evil.example:\(server.port)\r\n\r\n")
        #expect(rebound.head.hasPrefix("HTTP/1.1 421"))
        #expect(rebound.body.contains("--allow-host"))
        #expect(!rebound.body.contains("panels"))
        #expect(try response(server, "GET /healthz HTTP/1.1\r\n\r\n").head.hasPrefix("HTTP/1.1 400"))
        #expect(try response(server, "GET /healthz HTTP/1.0\r\n\r\n").head.hasPrefix("HTTP/1.1 200"))
        #expect(try response(server, "GET /healthz HTTP/1.1\r\nHost: localhost:\(server.port)\r\n\r\n").head.hasPrefix("HTTP/1.1 200"))
        #expect(try response(server, "GET /healthz HTTP/1.1\r\nHost: [::1]:\(server.port)\r\n\r\n").head.hasPrefix("HTTP/1.1 200"))
        let metrics = try response(server, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").body
        #expect(metrics.contains("arbiter_host_refused_total 1"))
    }

    /// A target in absolute form names the host it is for (RFC 9112 3.2.2): a foreign one
    /// is refused as a foreign `Host` is, whatever `Host` says, WebSocket upgrades included.
    @Test func anAbsoluteFormTargetWithAForeignAuthorityGets421() throws {
        let server = try TestServer()
        let foreign = try response(server, "GET http://evil.example/api/panels HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\r\n")
        #expect(foreign.head.hasPrefix("HTTP/1.1 421"), "\(foreign.head)")
        #expect(foreign.body.contains("does not answer to the host evil.example"))
        #expect(!foreign.body.contains("panels"))
        let own = try response(server, "GET http://127.0.0.1:\(server.port)/api/panels HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\r\n")
        #expect(own.head.hasPrefix("HTTP/1.1 200"), "\(own.head)")
        #expect(own.body.contains("\"demo\""))
        func upgrade(_ target: String) throws -> String {
            try response(
                server,
                "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
            ).head
        }
        #expect(try upgrade("http://evil.example/ws?panel=demo").hasPrefix("HTTP/1.1 421"))
        #expect(try upgrade("http://localhost:\(server.port)/ws?panel=demo").hasPrefix("HTTP/1.1 101"))
        let metrics = try response(server, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").body
        #expect(metrics.contains("arbiter_host_refused_total 2"))
    }

    @Test func allowHostAddsAName() throws {
        let server = try TestServer { $0.allowedHosts = ["buttons.example.org"] }
        #expect(try response(server, "GET /healthz HTTP/1.1\r\nHost: buttons.example.org\r\n\r\n").head.hasPrefix("HTTP/1.1 200"))
        #expect(try response(server, "GET /healthz HTTP/1.1\r\nHost: other.example.org\r\n\r\n").head.hasPrefix("HTTP/1.1 421"))
    }

    func upgrade(_ server: TestServer, origin: String?) throws -> (head: String, body: String) {
        let originLine = origin.map { "Origin: \($0)\r\n" } ?? ""
        return try response(
            server,
            "GET /ws?panel=demo HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nUpgrade: websocket\r\n"
                + "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\(originLine)\r\n")
    }

    @Test func webSocketsFromOtherSitesGet403() throws {
        let server = try TestServer { $0.allowedOrigins = ["https://panel.example.org"] }
        let foreign = try upgrade(server, origin: "http://evil.example")
        #expect(foreign.head.hasPrefix("HTTP/1.1 403"))
        #expect(foreign.body.contains("http://evil.example"))
        #expect(try upgrade(server, origin: "http://127.0.0.1:\(server.port &+ 1)").head.hasPrefix("HTTP/1.1 403"))
        #expect(try upgrade(server, origin: "http://127.0.0.1:\(server.port)").head.hasPrefix("HTTP/1.1 101"))
        #expect(try upgrade(server, origin: "https://panel.example.org").head.hasPrefix("HTTP/1.1 101"))
        #expect(try upgrade(server, origin: nil).head.hasPrefix("HTTP/1.1 101"))
        let metrics = try response(server, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").body
        #expect(metrics.contains("arbiter_origin_refused_total 2"))
    }
}
