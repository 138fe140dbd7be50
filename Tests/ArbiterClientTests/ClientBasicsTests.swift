@testable import ArbiterClient
import ArbiterTestSupport
import Foundation
import Testing

/// The client against a server started in this process on a free port.
@Suite("client: presses and events")
struct ClientBasicsTests {
    @Test func grantAndDeny() async throws {
        let server = try TestServer(panels: [CalmPanel.config])
        let alice = try await ArbiterClient.connect(hosts: ["127.0.0.1:\(server.port)"], name: "alice")
        let bob = try await ArbiterClient.connect(hosts: ["127.0.0.1:\(server.port)"], name: "bob")
        let a = try await alice.join("demo")
        let b = try await bob.join("demo")
        #expect(a.state.buttons.map(\.id) == ["b1", "b2", "b3", "sos", "other"])
        #expect(a.state[button: "sos"]?.kind == "hold")
        #expect(a.state[button: "sos"]?.group == "emergency")

        let granted = try await a.down("b1")
        guard case .granted(let fence) = granted else { Issue.record("\(granted)"); return }
        #expect(fence == 1)
        #expect(try await b.down("b2") == .denied(reason: "busy", owner: "alice"))
        #expect(try await a.up("b1") == .released)
        #expect(try await b.down("b2") == .granted(fence: 2))
        do {
            _ = try await b.down("zz")
            Issue.record("pressed a button that does not exist")
        } catch ArbiterClientError.server(let code, _) {
            #expect(code == "no-such-button")
        }
    }

    @Test func joiningAPanelThatDoesNotExistThrows() async throws {
        let server = try TestServer()
        let client = try await ArbiterClient.connect(hosts: ["127.0.0.1:\(server.port)"], name: "carol")
        do {
            _ = try await client.join("nope")
            Issue.record("joined a panel that does not exist")
        } catch ArbiterClientError.server(let code, _) {
            #expect(code == "no-such-panel")
        }
    }

    /// The refusal may be read before the caller waits for it (a busy machine, a fast
    /// server): it must still come back as the server's error, never as "closed". Many
    /// joins at once on a 2-core machine make the reader win that race now and then.
    @Test func aRefusedJoinIsTheServersErrorHoweverFastItComes() async throws {
        let server = try TestServer()
        let client = try await ArbiterClient.connect(hosts: ["127.0.0.1:\(server.port)"], name: "erin")
        let wrong = await withTaskGroup(of: String?.self) { group in
            for joiner in 0..<16 {
                group.addTask {
                    for attempt in 0..<40 {
                        do {
                            _ = try await client.join("nope\(joiner)")
                            return "joined a panel that does not exist"
                        } catch ArbiterClientError.server(let code, _) where code == "no-such-panel" {
                        } catch {
                            return "joiner \(joiner), attempt \(attempt): \(error)"
                        }
                    }
                    return nil
                }
            }
            return await group.compactMap { $0 }.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(wrong.isEmpty, "\(wrong)")
    }

    /// A hold seen through the events: every seq once and in order, MIDWAY before the
    /// progress reaches one half, FIRED then RELEASED, and the finger's UP after it.
    @Test func aHoldsEventsComeInSeqOrder() async throws {
        let server = try TestServer()
        let client = try await ArbiterClient.connect(hosts: ["127.0.0.1:\(server.port)"], name: "dave")
        let panel = try await client.join("demo")
        let recorder = EventRecorder(panel.events)
        let first = panel.state.seq
        guard case .granted(let fence) = try await panel.down("sos") else { Issue.record("not granted"); return }
        try await recorder.expect("RELEASED reason=fired") {
            if case .released("sos", "fired", _, fence, _) = $0 { return true }
            return false
        }
        #expect(try await panel.up("sos") == .alreadyEnded(reason: "fired"))
        let seqs = recorder.all.compactMap(\.seq)
        #expect(seqs == Array((first + 1)...(first + UInt64(seqs.count))), "\(seqs)")
        let kinds = recorder.all.map { String(describing: $0).split(separator: " ")[0] }
        // dave's own JOINED follows his snapshot; on a busy machine it is read after the
        // stream began.
        #expect(kinds.drop { $0 == "JOINED" }.first == "PRESSED", "\(kinds)")
        #expect(kinds.suffix(3) == ["PROGRESS", "FIRED", "RELEASED"])
        let midway = try #require(kinds.firstIndex(of: "MIDWAY"))
        for event in recorder.all[..<midway] {
            if case .progress(_, let value, _) = event { #expect(value < 0.5) }
        }
        #expect(panel.state[button: "sos"]?.phase == .idle)
        #expect(panel.state.fence == fence)
    }

    /// The live state follows the events: another member's press locks the group.
    @Test func theStateFollowsTheEvents() async throws {
        let server = try TestServer(panels: [CalmPanel.config])
        let viewer = try await ArbiterClient.connect(hosts: ["127.0.0.1:\(server.port)"], name: "viewer")
        let presser = try await ArbiterClient.connect(hosts: ["127.0.0.1:\(server.port)"], name: "presser")
        let watched = try await viewer.join("demo")
        let recorder = EventRecorder(watched.events)
        let pressing = try await presser.join("demo")
        try await recorder.expect("JOINED presser") {
            if case .joined("presser", _, _) = $0 { return true }
            return false
        }
        #expect(watched.state.members == 2)
        _ = try await pressing.down("b2")
        try await recorder.expect("FIRED b2") { $0.button == "b2" && String(describing: $0).hasPrefix("FIRED") }
        #expect(watched.state[button: "b2"]?.phase == .pressed)
        #expect(watched.state[button: "b1"]?.phase == .locked)
        #expect(watched.state[button: "b1"]?.owner == "presser")
        #expect(watched.state[button: "sos"]?.phase == .idle)
        try await pressing.up("b2")
        try await recorder.expect("RELEASED b2") { if case .released("b2", "up", _, _, _) = $0 { return true } else { return false } }
        #expect(watched.state[button: "b1"]?.phase == .idle)
    }

    /// An `up` while the `down` of the same button still waits to be sent withdraws it.
    @Test func anUpWithdrawsADownNotYetSent() async throws {
        let server = try TestServer()
        let client = try await ArbiterClient.connect(hosts: ["127.0.0.1:\(server.port)"], name: "erin")
        let panel = try await client.join("demo")
        let events = panel.events
        server.server.stop()
        // The stop closed the connection: wait until the client knows, so the DOWN waits.
        for await event in events {
            if case .disconnected = event { break }
        }
        let press = Task { try await panel.down("b1") }
        // The up must come after the down registered (the task's first step); bounded.
        for _ in 0..<10_000 where client.core.locked({ client.core.s.downs.isEmpty }) { await Task.yield() }
        #expect(try await panel.up("b1") == .withdrawn)
        await #expect(throws: ArbiterClientError.withdrawn) { _ = try await press.value }
    }
}
