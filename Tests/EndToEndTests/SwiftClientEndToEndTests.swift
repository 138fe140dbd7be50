import ArbiterClient
import ArbiterTestSupport
import Foundation
import Testing

/// The Swift client against the real binary: SIGTERM, a start again on the same port and
/// journal, and the app's next press granted above the old fence without it doing a thing.
@Suite("end to end: the Swift client", .serialized)
struct SwiftClientEndToEndTests {
    @Test func theClientRidesOutARestartOfTheBinary() async throws {
        let journal = FileManager.default.temporaryDirectory.appendingPathComponent("client-e2e-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        defer {
            try? FileManager.default.removeItem(atPath: journal)
            try? FileManager.default.removeItem(atPath: journal + ".lock")
        }
        let first = try ArbiterProcess(["--port", "0", "--journal", journal])
        let port = first.port
        var options = ArbiterClientOptions()
        options.reconnectDelay = 0.05
        options.maxReconnectDelay = 0.5
        let client = try await ArbiterClient.connect(hosts: ["127.0.0.1:\(port)"], name: "kiosk-1", options: options)
        let panel = try await client.join("demo")
        var events = panel.events.makeAsyncIterator()
        guard case .granted(let before) = try await panel.down("sos") else { Issue.record("not granted"); return }

        first.terminate()
        #expect(try first.waitForExit(timeout: 20) == 0)
        // Graceful: the release is said before the goodbye, so it is seen live (`shutdown`,
        // or `fired` if a loaded machine took 3 s to get from the press to the SIGTERM).
        var endSeen: String?
        while let event = await events.next() {
            if case .released("sos", let reason, _, before, _) = event { endSeen = reason }
            if case .disconnected = event { break }
        }
        #expect(endSeen == "shutdown" || endSeen == "fired", "\(endSeen ?? "no RELEASED")")

        let second = try ArbiterProcess(["--port", "\(port)", "--journal", journal])
        defer { second.terminate() }
        while let event = await events.next() {
            if case .resynced(_, .reconnected) = event { break }
        }
        guard case .granted(let after) = try await panel.down("sos") else { Issue.record("not granted after the restart"); return }
        #expect(after > before)
        // Released, or fired already if the machine was slow to get here (3 s).
        let up = try await panel.up("sos")
        #expect(up == .released || up == .alreadyEnded(reason: "fired"), "\(up)")
        client.close()
    }
}
