import ArbiterHooks
import ArbiterTestSupport
import ArbiterWire
import Foundation
import Testing

/// Hooks against the real binary: a fire the receiver never got before `kill -9` is
/// delivered by the next start on the same journal, signed, with the id it was made with.
@Suite("end to end: webhooks", .serialized)
struct HookEndToEndTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hooks-e2e-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
    let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

    func setUp(port: UInt16, secretMode: Int) throws -> (config: String, journal: String) {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let secretPath = directory + "/hook.secret"
        try Data((secret + "\n").utf8).write(to: URL(fileURLWithPath: secretPath))
        try FileManager.default.setAttributes([.posixPermissions: secretMode], ofItemAtPath: secretPath)
        let config = directory + "/panels.json"
        let json = """
            { "panels": [ { "id": "demo", "buttons": [ { "id": "b1" } ],
              "hooks": [ { "url": "http://127.0.0.1:\(port)/fire", "events": ["fired"], "secret_file": "hook.secret", "timeout_ms": 2000 } ] } ] }
            """
        try Data(json.utf8).write(to: URL(fileURLWithPath: config))
        return (config, directory + "/journal.jsonl")
    }

    @Test func aFireNotDeliveredBeforeKill9IsDeliveredAfterTheRestartWithItsID() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let receiver = try HookReceiver()
        receiver.pause()
        let (config, journal) = try setUp(port: receiver.port, secretMode: 0o600)
        let first = try ArbiterProcess(["--port", "0", "--config", config, "--journal", journal])
        let c = try LineClient(port: first.port)
        c.send("HELLO alice\nJOIN demo\nDOWN demo b1")
        let fired = try c.expect("FIRED demo b1")
        kill(first.process.processIdentifier, SIGKILL)
        _ = try first.waitForExit(timeout: 20)
        #expect(receiver.received.isEmpty)

        receiver.resume()
        let second = try ArbiterProcess(["--port", "0", "--config", config, "--journal", journal])
        defer { second.terminate() }
        let got = receiver.wait(for: 1, timeout: 20)
        try #require(got.count >= 1)
        let request = got[0]
        let seq = try #require(field("seq", of: fired))
        #expect(request.target == "/fire")
        let id = try #require(request.headers["webhook-id"])
        #expect(id.hasSuffix("_demo_\(seq)"))
        #expect(request.text.contains(#""type":"fired""#) && request.text.contains(#""seq":\#(seq)"#))
        let timestamp = try #require(request.headers["webhook-timestamp"].flatMap { Int64($0) })
        let key = try HookSecret.parse(Array(secret.utf8)).get()
        #expect(request.headers["webhook-signature"] == WebhookSignature.sign(key: key, id: id, timestamp: timestamp, body: request.body))
        #expect(second.stderrContains("hook deliveries resumed after a restart"))
    }

    @Test func aSecretFileOthersMayReadExits78NamingTheHook() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (config, _) = try setUp(port: 9, secretMode: 0o644)
        let result = try ArbiterProcess.run(["--port", "0", "--config", config])
        #expect(result.status == 78)
        #expect(result.stderr.contains("panels[0].hooks[0].secret_file: \(directory)/hook.secret is readable by group or others"), "\(result.stderr)")
    }
}
