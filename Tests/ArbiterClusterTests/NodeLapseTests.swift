import Testing

@testable import ArbiterCluster

/// A node's lapse, driven by hand: leases and times are given, nothing sleeps.
@Suite struct NodeLapseTests {
    @Test func aStartingNodeIsNotLapsedAndTakesItsFirstLease() {
        var lapse = NodeLapse()
        #expect(lapse.heard(safe: nil, held: nil, now: 0) == (false, []))
        #expect(lapse.state == .unsynced)
        #expect(lapse.heard(safe: 7, held: 7, now: 10) == (false, []))
        #expect(lapse.state == .synced(lease: 7))
        #expect(lapse.syncedLease == 7 && lapse.epoch == 1)
    }

    @Test func aNodeHoldingALeaseThatIsNotSafeYetLapses() {
        var lapse = NodeLapse()
        let (lapsed, actions) = lapse.heard(safe: nil, held: 7, now: 5)
        #expect(lapsed && actions == [.lapsed, .lookAgain(at: 5 + NodeLapse.lookEveryMs)])
        #expect(lapse.state == .lapsed(previous: 0, since: 5))
    }

    @Test func anotherLeaseThanTheSynchronisedOneIsALapse() {
        var lapse = NodeLapse()
        _ = lapse.check(safe: 7, now: 0)
        #expect(lapse.heard(safe: 7, held: 7, now: 1) == (false, []))
        let (lapsed, actions) = lapse.heard(safe: 8, held: 8, now: 2)
        #expect(lapsed && actions.first == .lapsed)
        #expect(lapse.isLapsed && lapse.epoch == 2 && lapse.syncedLease == 7)
        // Lapsed: heard and checked again, nothing new begins.
        #expect(lapse.heard(safe: 8, held: 8, now: 3) == (true, []))
        #expect(lapse.check(safe: nil, now: 3) == [])
        #expect(lapse.epoch == 2)
    }

    @Test func theTimerNoticesALeaseLostWhileNothingWasHeard() {
        var lapse = NodeLapse()
        #expect(lapse.check(safe: nil, now: 0) == [], "a node starting up is not lapsed")
        _ = lapse.check(safe: 4, now: 1)
        #expect(lapse.check(safe: 4, now: 2) == [])
        #expect(lapse.check(safe: nil, now: 500) == [.lapsed, .lookAgain(at: 550)])
    }

    @Test func aSafeLeaseBackResynchronisesThenFramesAreHeardAgain() {
        var lapse = NodeLapse()
        _ = lapse.check(safe: 4, now: 0)
        _ = lapse.check(safe: nil, now: 100)
        #expect(lapse.look(safe: nil, now: 150) == [.lookAgain(at: 200)])
        #expect(lapse.look(safe: 9, now: 200) == [.resync(lease: 9)])
        // The new lease is published before the panels resynchronise; still lapsed meanwhile.
        #expect(lapse.syncedLease == 9 && lapse.isLapsed)
        #expect(lapse.heard(safe: 9, held: 9, now: 210) == (true, []))
        lapse.resynced()
        #expect(lapse.state == .synced(lease: 9) && !lapse.isLapsed)
        #expect(lapse.heard(safe: 9, held: 9, now: 220) == (false, []))
    }

    @Test func noSafeLeaseForTenMinutesResynchronisesWithout() {
        var lapse = NodeLapse()
        _ = lapse.check(safe: 4, now: 0)
        _ = lapse.check(safe: nil, now: 1_000)
        #expect(lapse.look(safe: nil, now: 1_000 + NodeLapse.giveUpMs - 1) == [.lookAgain(at: 1_000 + NodeLapse.giveUpMs - 1 + NodeLapse.lookEveryMs)])
        #expect(lapse.look(safe: nil, now: 1_000 + NodeLapse.giveUpMs) == [.resync(lease: 0)])
        lapse.resynced()
        #expect(lapse.state == .unsynced)
    }

    @Test func outputAgreesOnlyWithTheSynchronisedLease() {
        var lapse = NodeLapse()
        #expect(lapse.agrees(3, holding: 3), "any lease while none is synchronised")
        #expect(lapse.agrees(nil, holding: nil) && !lapse.agrees(nil, holding: 3))
        _ = lapse.check(safe: 3, now: 0)
        #expect(lapse.agrees(3, holding: 3) && !lapse.agrees(4, holding: 4) && !lapse.agrees(nil, holding: nil))
    }
}
