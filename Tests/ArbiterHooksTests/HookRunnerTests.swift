import ArbiterCore
import ArbiterHooks
import ArbiterIO
import ArbiterTestSupport
import ArbiterWire
import Dispatch
import Testing

/// The runner against a real local receiver; time moves on a manual clock, so retries
/// come when the test says, not after real backoffs.
@Suite struct HookRunnerTests {
    let clock = ManualClock()
    let sender = CountingSender()

    func runner(_ receiver: HookReceiver, timeoutMs: Int64 = 5000, secret: [UInt8]? = nil, maxInFlight: Int = 4) throws -> HookRunner {
        let url = "http://127.0.0.1:\(receiver.port)/hook"
        let config = HookConfig(url: url, secret: secret, timeoutMs: timeoutMs)
        var policy = HookOutbox.Policy(maxAgeNs: 86_400_000_000_000, maxPending: 100)
        policy.maxInFlight = maxInFlight
        let r = HookRunner(
            panel: "p", index: 0, config: config, url: try HookURL.parse(url).get(), sender: sender, clock: clock, store: nil,
            log: .silent, policy: policy, jitter: { _ in 0 })
        r.start()
        return r
    }

    func delivery(_ seq: UInt64) -> HookDelivery {
        HookDelivery(id: "x_p_\(seq)", seq: seq, body: Array(#"{"type":"fired","seq":\#(seq)}"#.utf8), createdWallMs: clock.wallMilliseconds())
    }

    /// The stats once `attempts` more attempts have ended and been handled: waits on
    /// the sender's outcomes, then on the runner's queue, which handles each outcome it
    /// was handed before the test's turn.
    func after(_ attempts: Int, _ r: HookRunner) -> HookStats {
        for _ in 0..<attempts { _ = sender.ended.wait(timeout: .now() + 10) }
        return r.sync { r.stats.withLock { $0 } }
    }

    @Test func deliversSignedRequestsInOrderToAFastReceiver() throws {
        let receiver = try HookReceiver()
        let key = Array("0123456789abcdef".utf8)
        let r = try runner(receiver, secret: key, maxInFlight: 1)
        defer { r.stop() }
        r.submit((1...5).map { delivery($0) })
        let got = receiver.wait(for: 5)
        #expect(got.map(\.text) == (1...5).map { #"{"type":"fired","seq":\#($0)}"# })
        let first = try #require(got.first)
        #expect(first.target == "/hook")
        #expect(first.headers["content-type"] == "application/json")
        #expect(first.headers["webhook-id"] == "x_p_1")
        let ts = try #require(first.headers["webhook-timestamp"].flatMap { Int64($0) })
        #expect(ts == clock.wallMilliseconds() / 1000)
        #expect(first.headers["webhook-signature"] == WebhookSignature.sign(key: key, id: "x_p_1", timestamp: ts, body: first.body))
        #expect(after(5, r).pending == 0)
    }

    @Test func aReceiverDownThenUpGetsTheEventWithTheSameID() throws {
        let receiver = try HookReceiver()
        receiver.pause()
        let r = try runner(receiver)
        defer { r.stop() }
        r.submit([delivery(7)])
        let failed = after(1, r)
        #expect(failed.retried == 1 && failed.lastFailureReason != nil, "\(failed)")
        receiver.resume()
        clock.advance(milliseconds: 250)
        r.poke()
        let got = receiver.wait(for: 1)
        #expect(got.map { $0.headers["webhook-id"] } == ["x_p_7"])
        #expect(after(1, r).delivered == 1)
    }

    @Test func aStatusNoRetryChangesIsDroppedAtOnce() throws {
        let receiver = try HookReceiver(.status(404))
        let r = try runner(receiver)
        defer { r.stop() }
        r.submit([delivery(1)])
        let s = after(1, r)
        #expect(s.rejected == 1 && s.pending == 0 && s.lastFailureReason == "status 404")
    }

    @Test(arguments: [HookReceiver.Behavior.silent, .trickle, .flood])
    func aHostileReceiverCostsOneAttemptsDeadlineAndIsRetried(_ behavior: HookReceiver.Behavior) throws {
        let receiver = try HookReceiver(behavior)
        defer { receiver.close() }
        let r = try runner(receiver, timeoutMs: 1500)
        defer { r.stop() }
        let started = DispatchTime.now()
        r.submit([delivery(1)])
        let s = after(1, r)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        #expect(s.retried == 1 && s.delivered == 0 && s.pending == 1)
        // Within the total deadline (and a margin for a loaded machine), whatever the
        // receiver sends: a trickle does not extend it, a flood ends at 8 KiB.
        #expect(seconds < 4)
    }
}

/// The real sender, telling the test each time an attempt ended.
final class CountingSender: HookSender, @unchecked Sendable {
    let inner = PlainHTTPSender()
    let ended = DispatchSemaphore(value: 0)

    func send(_ request: HookRequest, timeoutMs: Int64, done: @escaping @Sendable (HookOutcome) -> Void) {
        inner.send(request, timeoutMs: timeoutMs) { outcome in
            done(outcome)
            self.ended.signal()
        }
    }
}
