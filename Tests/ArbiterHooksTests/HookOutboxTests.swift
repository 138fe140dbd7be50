import ArbiterHooks
import ArbiterIO
import Testing

@Suite struct HookOutboxTests {
    let clock = ManualClock()
    var now: Int64 { clock.nanoseconds() }

    func delivery(_ seq: UInt64) -> HookDelivery {
        HookDelivery(id: "i_p_\(seq)", seq: seq, body: Array("{}".utf8), createdWallMs: 0)
    }

    /// No jitter: each retry waits exactly half its backoff plus nothing, so due times are exact.
    func outbox(maxAgeS: Int64 = 86_400, maxPending: Int = 100, inFlight: Int = 4) -> HookOutbox {
        var policy = HookOutbox.Policy(maxAgeNs: maxAgeS * 1_000_000_000, maxPending: maxPending)
        policy.maxInFlight = inFlight
        return HookOutbox(policy: policy, jitter: { _ in 0 })
    }

    @Test func freshDeliveriesStartInEventOrderAtMostAFewAtOnce() {
        var box = outbox(inFlight: 2)
        for seq in 1...5 { #expect(box.enqueue(delivery(UInt64(seq)), now: now) == .accepted) }
        var started = box.takeAttempts(now: now).attempts
        #expect(started.map(\.delivery.seq) == [1, 2])
        #expect(box.nextWake(now: now) == nil)
        _ = box.finish(started[0].serial, .status(204), now: now)
        started = box.takeAttempts(now: now).attempts
        #expect(started.map(\.delivery.seq) == [3])
        #expect(box.pending == 4)
    }

    /// A leader that stops deciding forgets its deliveries (the next leader has them in
    /// etcd): an attempt that ends afterwards finds nothing, and the slots are free again.
    @Test func abandoningForgetsEverythingAndALateFinishFindsNothing() {
        var box = outbox(inFlight: 2)
        for seq in 1...4 { _ = box.enqueue(delivery(UInt64(seq)), now: now) }
        let started = box.takeAttempts(now: now).attempts
        _ = box.finish(started[0].serial, .status(503), now: now)
        box.abandonAll()
        #expect(box.pending == 0)
        #expect(box.inFlight == 0)
        #expect(box.finish(started[1].serial, .status(204), now: now) == nil)
        #expect(box.nextWake(now: now) == nil)
        _ = box.enqueue(delivery(5), now: now)
        #expect(box.takeAttempts(now: now).attempts.map(\.delivery.seq) == [5])
    }

    @Test func backoffDoublesFromHalfASecondToThirtySeconds() {
        var box = outbox(inFlight: 1)
        _ = box.enqueue(delivery(1), now: now)
        var dues: [Int64] = []
        for _ in 0..<9 {
            let attempt = box.takeAttempts(now: now).attempts
            #expect(attempt.count == 1)
            guard case .retrying(let due, _)? = box.finish(attempt[0].serial, .failed("connection refused"), now: now)?.result else {
                Issue.record("not retried")
                return
            }
            dues.append((due - now) / 1_000_000)
            // Not due a moment early; due at its time.
            clock.advance(nanoseconds: due - now - 1)
            #expect(box.takeAttempts(now: now).attempts.isEmpty)
            clock.advance(nanoseconds: 1)
        }
        // Zero jitter takes the lower half: backoffs of 0.5, 1, 2 ... 30 s wait half of that.
        #expect(dues == [250, 500, 1000, 2000, 4000, 8000, 15_000, 15_000, 15_000])
    }

    @Test func jitterSpreadsARetryOverTheUpperHalfOfItsBackoff() {
        var policy = HookOutbox.Policy(maxAgeNs: 86_400_000_000_000, maxPending: 10)
        policy.maxInFlight = 1
        var box = HookOutbox(policy: policy, jitter: { $0 - 1 })
        _ = box.enqueue(delivery(1), now: now)
        let a = box.takeAttempts(now: now).attempts[0]
        guard case .retrying(let due, _)? = box.finish(a.serial, .status(503), now: now)?.result else {
            Issue.record("not retried")
            return
        }
        #expect(due - now == 500_000_000)
    }

    @Test func statusesAreDeliveredRetriedOrDropped() {
        #expect(HookOutcome.status(200).verdict == .delivered)
        #expect(HookOutcome.status(299).verdict == .delivered)
        for code in [408, 429, 500, 502, 503, 599] { #expect(HookOutcome.status(code).verdict == .retry) }
        #expect(HookOutcome.failed("timed out").verdict == .retry)
        for code in [301, 400, 401, 404, 410, 413] { #expect(HookOutcome.status(code).verdict == .reject) }
    }

    @Test func aRejectedDeliveryIsDroppedAtOnceAndTheLogHearsOfFailingAndRecoveringOnce() {
        var box = outbox()
        for seq in 1...3 { _ = box.enqueue(delivery(UInt64(seq)), now: now) }
        let a = box.takeAttempts(now: now).attempts
        #expect(box.finish(a[0].serial, .status(404), now: now)?.result == .rejected(startedFailing: true))
        #expect(box.finish(a[1].serial, .status(500), now: now)?.result == .retrying(dueNs: now + 250_000_000, startedFailing: false))
        #expect(box.finish(a[2].serial, .status(200), now: now)?.result == .delivered(latencyNs: 0, recovered: true))
        #expect(box.pending == 1)
    }

    @Test func aFailingDeliveryDoesNotHoldBackTheNextOnes() {
        var box = outbox(inFlight: 1)
        _ = box.enqueue(delivery(1), now: now)
        _ = box.enqueue(delivery(2), now: now)
        let first = box.takeAttempts(now: now).attempts[0]
        _ = box.finish(first.serial, .failed("timed out"), now: now)
        #expect(box.takeAttempts(now: now).attempts.map(\.delivery.seq) == [2])
    }

    @Test func retriesStopAtMaxAge() {
        var box = outbox(maxAgeS: 2, inFlight: 1)
        _ = box.enqueue(delivery(1), now: now)
        var results: [HookOutbox.Result] = []
        for _ in 0..<10 {
            guard let a = box.takeAttempts(now: now).attempts.first, let r = box.finish(a.serial, .failed("refused"), now: now)?.result else { break }
            results.append(r)
            if case .retrying(let due, _) = r { clock.advance(nanoseconds: due - now) } else { break }
        }
        // Waits of 0.25, 0.5, 1 s (1.75 s in all); the next would end past 2 s.
        #expect(results.count == 4)
        #expect(results.last == .expired(startedFailing: false))
        #expect(box.pending == 0)
    }

    @Test func aReloadedDeliveryOlderThanMaxAgeExpiresUnsent() {
        var box = outbox(maxAgeS: 10)
        _ = box.enqueue(delivery(1), ageNs: 11_000_000_000, now: now)
        let taken = box.takeAttempts(now: now)
        #expect(taken.attempts.isEmpty)
        #expect(taken.expired.map(\.seq) == [1])
    }

    @Test func pastMaxPendingTheNewestAreDroppedAndTheFirstDropOfAnEpisodeIsTheOneToLog() {
        var box = outbox(maxPending: 10, inFlight: 1)
        for seq in 1...10 { #expect(box.enqueue(delivery(UInt64(seq)), now: now) == .accepted) }
        #expect(box.enqueue(delivery(11), now: now) == .dropped(firstOfEpisode: true))
        #expect(box.enqueue(delivery(12), now: now) == .dropped(firstOfEpisode: false))
        // Back under 90 %: the episode is over, the next drop is logged again.
        for _ in 0..<2 {
            let a = box.takeAttempts(now: now).attempts[0]
            _ = box.finish(a.serial, .status(200), now: now)
        }
        _ = box.takeAttempts(now: now)
        #expect(box.enqueue(delivery(13), now: now) == .accepted)
        #expect(box.enqueue(delivery(14), now: now) == .accepted)
        #expect(box.enqueue(delivery(15), now: now) == .dropped(firstOfEpisode: true))
    }
}
