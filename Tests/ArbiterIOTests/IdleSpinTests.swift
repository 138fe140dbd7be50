import ArbiterIO
import Testing

/// The adaptive window of `IdleSpin`, with idle spells and a clock given by hand.
@Suite struct IdleSpinTests {
    @Test func aWindowGrowsOnSpellsASpinWouldHaveCaughtAndKeepsWhileTheyFit() {
        var spin = IdleSpin(maxNs: 200_000)
        #expect(spin.windowNs == 0)
        // Answered 40 us after the loop ran out of work: a spin of 50 us would have caught it.
        spin.idleEnded(afterNs: 40_000)
        #expect(spin.windowNs == 50_000)
        // A closed loop of request and answer: every spell fits, the window stays.
        for _ in 0..<100 { spin.idleEnded(afterNs: 45_000) }
        #expect(spin.windowNs == 50_000)
        // Spells a little longer: doubled, up to the bound and no further.
        spin.idleEnded(afterNs: 90_000)
        #expect(spin.windowNs == 100_000)
        spin.idleEnded(afterNs: 150_000)
        #expect(spin.windowNs == 200_000)
        spin.idleEnded(afterNs: 199_000)
        #expect(spin.windowNs == 200_000)
    }

    @Test func sparseWorkHalvesTheWindowToNothing() {
        var spin = IdleSpin(maxNs: 200_000)
        spin.idleEnded(afterNs: 150_000)
        spin.idleEnded(afterNs: 150_000)
        spin.idleEnded(afterNs: 150_000)
        #expect(spin.windowNs == 200_000)
        // Timed-out waits (the 1 ms linger found nothing) and late work alike.
        spin.idleEnded(afterNs: .max)
        #expect(spin.windowNs == 100_000)
        spin.idleEnded(afterNs: 5_000_000)
        #expect(spin.windowNs == 50_000)
        var halvings = 0
        while spin.windowNs > 0, halvings < 64 {
            spin.idleEnded(afterNs: .max)
            halvings += 1
        }
        #expect(spin.windowNs == 0)
        #expect(halvings == 6, "50 us halves to 781 ns, under a microsecond, after 6 misses")
        // Work that never comes within the bound never opens a window.
        for _ in 0..<10 { spin.idleEnded(afterNs: 300_000) }
        #expect(spin.windowNs == 0)
    }

    @Test func offStaysOff() {
        var spin = IdleSpin(maxNs: 0)
        spin.idleEnded(afterNs: 1)
        spin.idleEnded(afterNs: 10_000)
        #expect(spin.windowNs == 0)
        var looks = 0
        func never() -> Int64 { 0 }
        let found = spin.spin(from: 0, now: never) {
            looks += 1
            return 0
        }
        #expect(found == 0)
        #expect(looks == 0)
        // A bound under the growth's start grows straight to the bound.
        var small = IdleSpin(maxNs: 20_000)
        small.idleEnded(afterNs: 10_000)
        #expect(small.windowNs == 20_000)
    }

    @Test func aSpinLooksUntilItFindsWorkOrItsWindowHasPassed() {
        var spin = IdleSpin(maxNs: 200_000)
        spin.idleEnded(afterNs: 40_000)
        var clock: Int64 = 1_000
        func now() -> Int64 { clock }
        var looks = 0
        // Each look takes 10 us of the hand-driven clock; nothing is found.
        let nothing = spin.spin(from: clock, now: now) {
            looks += 1
            clock += 10_000
            return 0
        }
        #expect(nothing == 0)
        #expect(looks == 5, "a 50 us window, 10 us per look")
        looks = 0
        let found = spin.spin(from: clock, now: now) {
            looks += 1
            return looks == 3 ? 2 : 0
        }
        #expect(found == 2)
        #expect(looks == 3)
        // An error from the look (epoll_wait's -1) ends the spin as well: the caller blocks.
        let failed = spin.spin(from: clock, now: now) { -1 }
        #expect(failed == -1)
    }

    @Test func aWaitBlocksOnlyWhenTheSpinFoundNothingAndItsSpellAdaptsTheWindow() {
        var spin = IdleSpin(maxNs: 200_000)
        var clock: Int64 = 0
        func now() -> Int64 { clock }
        var blocks = 0
        // No window yet: straight to the block, which finds work 40 us later.
        func nothing() -> Int { 0 }
        var found = spin.wait(now: now, look: nothing) {
            blocks += 1
            clock += 40_000
            return 1
        }
        #expect(found == 1 && blocks == 1)
        #expect(spin.windowNs == 50_000)
        // The spin finds the work itself: no block, and the window stays.
        func work() -> Int { 3 }
        found = spin.wait(now: now, look: work) {
            blocks += 1
            return 1
        }
        #expect(found == 3 && blocks == 1)
        #expect(spin.windowNs == 50_000)
        // Nothing within the window nor the block's timeout: halved.
        found = spin.wait(
            now: now,
            look: {
                clock += 10_000
                return 0
            },
            block: {
                blocks += 1
                clock += 1_000_000
                return 0
            })
        #expect(found == 0 && blocks == 2)
        #expect(spin.windowNs == 25_000)
        // Off: the block alone, the window never opens.
        var off = IdleSpin(maxNs: 0)
        var looks = 0
        found = off.wait(
            now: now,
            look: {
                looks += 1
                return 1
            },
            block: { 7 })
        #expect(found == 7 && looks == 0 && off.windowNs == 0)
    }
}
