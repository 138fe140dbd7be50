import ArbiterClient
import ArbiterTestSupport
import Foundation
import Testing

/// Losing the connection and getting it back: a server restarted on its journal, a
/// session kicked, a link that went silent.
@Suite("client: reconnect and resync")
struct ClientReconnectTests {
    /// Quick to notice and to come back, for tests.
    static var fast: ArbiterClientOptions {
        var options = ArbiterClientOptions()
        options.reconnectDelay = 0.05
        options.maxReconnectDelay = 0.5
        options.pingAfter = 0.2
        options.deadAfter = 1
        return options
    }

    func journalPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("client-journal-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).jsonl").path
    }

    /// The server stops (as a crash: connections cut) and starts again on the same port
    /// and journal: the client comes back by itself, tells the app its grant ended and
    /// why, and its next press gets a fence above the old one.
    @Test func aRestartOnTheJournalIsMadeGoodWithHigherFences() async throws {
        let path = journalPath()
        defer {
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: path + ".lock")
        }
        var server: TestServer? = try TestServer(panels: [CalmPanel.config]) { $0.journalPath = path }
        let port = try #require(server?.port)
        let client = try await ArbiterClient.connect(hosts: ["127.0.0.1:\(port)"], name: "kiosk-1", options: Self.fast)
        let panel = try await client.join("demo")
        let recorder = EventRecorder(panel.events)
        guard case .granted(let before) = try await panel.down("b1") else { Issue.record("not granted"); return }

        server?.server.stop()
        server = nil
        try await recorder.expect("disconnected") { if case .disconnected = $0 { return true } else { return false } }
        server = try TestServer(panels: [CalmPanel.config]) {
            $0.journalPath = path
            $0.port = port
        }
        try await recorder.expect("resynced after reconnecting") {
            if case .resynced(_, .reconnected) = $0 { return true } else { return false }
        }
        let ended = try await recorder.expect("b1 ended while away") { $0.button == "b1" }
        #expect(ended == .endedWhileAway(button: "b1", fence: before, reason: "disconnect"))
        #expect(panel.state[button: "b1"]?.phase == .idle)
        #expect(try await panel.up("b1") == .alreadyEnded(reason: "disconnect"))

        guard case .granted(let after) = try await panel.down("b1") else { Issue.record("not granted after the restart"); return }
        #expect(after > before)
        try await panel.up("b1")
    }

    /// Kicked by an admin, the client misses its own grant's RELEASED and another member's
    /// press: after it is back the state shows the truth, and the grant is reported ended.
    @Test func eventsMissedWhileAwayAreMadeGoodByTheSnapshot() async throws {
        let server = try TestServer(panels: [CalmPanel.config])
        let client = try await ArbiterClient.connect(hosts: ["127.0.0.1:\(server.port)"], name: "kiosk-2", options: Self.fast)
        let panel = try await client.join("demo")
        let recorder = EventRecorder(panel.events)
        guard case .granted(let fence) = try await panel.down("b1") else { Issue.record("not granted"); return }
        let session = try #require(client.session)

        let admin = try server.member("admin")
        admin.send("KICK \(session)")
        _ = try admin.expect("OK KICK")
        // Pressed while the client is gone or coming back: seen live or in the snapshot.
        admin.send("DOWN demo other")
        _ = try admin.expect("GRANTED demo other")

        try await recorder.expect("resynced") { if case .resynced(_, .reconnected) = $0 { return true } else { return false } }
        let ended = try await recorder.expect("b1 ended while away") { $0.button == "b1" }
        #expect(ended == .endedWhileAway(button: "b1", fence: fence, reason: "disconnect"))
        #expect(panel.state[button: "b1"]?.phase == .idle)
        #expect(panel.state[button: "other"]?.owner == "admin")
        #expect(client.session != session)
        // The seq chain goes on from the new snapshot: nothing passed on twice or skipped.
        let afterResync = recorder.all.drop { if case .resynced = $0 { return false } else { return true } }
        let seqs = afterResync.compactMap(\.seq)
        #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count)
    }

    /// A link that goes silent (no FIN, no RST) is noticed by the PINGs the client sends
    /// on a quiet link, and made again.
    @Test func aSilentLinkIsNoticedByPing() async throws {
        let server = try TestServer()
        let proxy = try FreezingProxy(to: server.port)
        let client = try await ArbiterClient.connect(hosts: ["127.0.0.1:\(proxy.port)"], name: "kiosk-3", options: Self.fast)
        let panel = try await client.join("demo")
        let recorder = EventRecorder(panel.events)
        proxy.freeze()
        // Nothing closes the link but the client's own rule (the proxy forwards nothing and
        // closes nothing, the server has no idle timeout): its reason says it was silent
        // past deadAfter (1 s) with PINGs unanswered, and for how long.
        let gone = try await recorder.expect("disconnected") { if case .disconnected = $0 { return true } else { return false } }
        #expect("\(gone)".contains("silent for"), "\(gone)")
        try await recorder.expect("resynced") { if case .resynced(_, .reconnected) = $0 { return true } else { return false } }
        #expect(proxy.accepted == 2)
        #expect(try await panel.down("b3") == .granted(fence: 1))
    }
}
