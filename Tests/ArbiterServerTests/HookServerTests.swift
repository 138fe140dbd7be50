import ArbiterCore
import ArbiterTestSupport
import Foundation
import Testing

@Suite("webhooks over loopback")
struct HookServerTests {
    func demo(hook: HookConfig, keys: PanelKeys = PanelKeys()) -> [PanelConfig] {
        var panel = PanelConfig.demo
        panel.hooks = [hook]
        panel.keys = keys
        return [panel]
    }

    func response(_ server: TestServer, _ request: String) throws -> (head: String, body: String) {
        let s = try RawSocket(port: server.port)
        s.send(request)
        return try s.readResponse()
    }

    @Test func aHookGetsTheEventAsAJSONMemberSeesItWithItsTime() throws {
        let receiver = try HookReceiver()
        let server = try TestServer(panels: demo(hook: HookConfig(url: "http://127.0.0.1:\(receiver.port)/in", buttons: [0])))
        let bob = try server.client(name: nil)
        bob.send("HELLO bob format=json")
        bob.send("JOIN demo")
        _ = try bob.expect(#"{"type":"joined""#)
        let alice = try server.client(name: "alice")
        // b2 is not the hook's button; its FIRED comes first and must not be delivered.
        alice.send("DOWN demo b2\nUP demo b2\nDOWN demo b1")
        _ = try bob.expect(#"{"type":"fired""#)
        let fired = try bob.expect(#"{"type":"fired""#)
        let got = receiver.wait(for: 1)
        try #require(got.count == 1)
        let body = got[0].text
        #expect(body.hasPrefix(String(fired.dropLast()) + #","time":""#))
        #expect(body.hasSuffix(#"Z"}"#))
        #expect(body.contains(#""button":"b1""#))
        let seq = try #require(fired.split(separator: ",").first { $0.hasPrefix(#""seq":"#) }).dropFirst(6).filter(\.isNumber)
        #expect(got[0].headers["webhook-id"]?.hasSuffix("_demo_\(seq)") == true)
        #expect(got[0].headers["webhook-signature"] == nil)
    }

    @Test func apiHooksNeedsTheAdminKeyAndMetricsCountDeliveries() throws {
        let receiver = try HookReceiver()
        var keys = PanelKeys()
        keys.admin = "boss"
        let server = try TestServer(panels: demo(hook: HookConfig(url: "http://127.0.0.1:\(receiver.port)/"), keys: keys)) { $0.logLevel = .debug }
        let alice = try server.client(name: "alice")
        alice.send("HELLO alice key=boss\nDOWN demo b1")
        _ = try alice.expect("GRANTED")
        #expect(receiver.wait(for: 1).count == 1)
        let refused = try response(server, "GET /api/hooks HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(refused.head.hasPrefix("HTTP/1.1 401"))
        server.log.wait(for: "hook delivered")
        let shown = try response(server, "GET /api/hooks HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer boss\r\n\r\n").body
        #expect(shown.contains(#""panel":"demo","hook":0"#))
        #expect(shown.contains(#""pending":0,"delivered":1"#))
        #expect(shown.contains(#""last_failure":null"#))
        let metrics = try response(server, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").body
        #expect(metrics.contains(#"arbiter_hook_deliveries_total{result="delivered"} 1"#))
        #expect(metrics.contains("arbiter_hook_pending 0"))
    }

    @Test func anUndeliveredEventIsDeliveredAfterARestartWithTheSameID() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hooks-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).jsonl").path
        defer {
            for suffix in ["", ".hooks", ".lock"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let receiver = try HookReceiver(.status(503))
        let panels = demo(hook: HookConfig(url: "http://127.0.0.1:\(receiver.port)/"))
        do {
            let server = try TestServer(panels: panels) { $0.journalPath = path }
            let alice = try server.client(name: "alice")
            alice.send("DOWN demo b1")
            _ = try alice.expect("GRANTED")
            #expect(receiver.wait(for: 1).count == 1)
            // Before the first retry (at least 250 ms later).
            server.server.stop()
        }
        receiver.behavior = .status(200)
        let server = try TestServer(panels: panels) { $0.journalPath = path }
        let got = receiver.wait(for: 2)
        try #require(got.count == 2)
        #expect(got[1].headers["webhook-id"] == got[0].headers["webhook-id"])
        #expect(got[1].body == got[0].body)
        _ = server
    }
}
