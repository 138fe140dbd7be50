import ArbiterHooks
import ArbiterIO
import ArbiterTestSupport
import ArbiterWire
import Dispatch
import Testing

/// The https sender against local receivers that speak no TLS: what matters here is that
/// every attempt ends, once, within its total deadline (URLSession's own timeout is an
/// idle one). A real TLS receiver is not part of `swift test`.
@Suite struct URLSessionSenderTests {
    func outcome(_ behavior: HookReceiver.Behavior, timeoutMs: Int64) throws -> (HookOutcome?, Double) {
        let receiver = try HookReceiver(behavior)
        defer { receiver.close() }
        let url = try HookURL.parse("https://127.0.0.1:\(receiver.port)/").get()
        let sender = URLSessionSender()
        let done = DispatchSemaphore(value: 0)
        let result = Locked<[HookOutcome]>([])
        let started = DispatchTime.now()
        sender.send(HookRequest(url: url, headers: [("webhook-id", "x")], body: Array("{}".utf8)), timeoutMs: timeoutMs) { outcome in
            result.withLock { $0.append(outcome) }
            done.signal()
        }
        _ = done.wait(timeout: .now() + 20)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        // Reported once: a second report would arrive within the grace of the deadline.
        _ = done.wait(timeout: .now() + .milliseconds(Int(timeoutMs)))
        let outcomes = result.withLock { $0 }
        #expect(outcomes.count == 1)
        return (outcomes.first, seconds)
    }

    @Test func aReceiverThatNeverAnswersEndsAtTheTotalDeadline() throws {
        let (outcome, seconds) = try outcome(.silent, timeoutMs: 1000)
        #expect(outcome?.verdict == .retry)
        #expect(seconds < 3)
    }

    @Test func aReceiverThatSpeaksNoTLSFailsAndIsRetried() throws {
        let (outcome, _) = try outcome(.status(200), timeoutMs: 3000)
        #expect(outcome?.verdict == .retry, "\(String(describing: outcome))")
    }
}
