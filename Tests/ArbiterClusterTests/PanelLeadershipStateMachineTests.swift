import ArbiterCore
import Testing
@testable import ArbiterCluster

@Suite struct PanelLeadershipStateMachineTests {
    var now = Instant(milliseconds: 10_000)

    /// A machine that leads `demo` in term 7 with fences 1...1000, lease 1 safe for 2 s.
    func leader() -> PanelLeadershipStateMachine {
        var m = PanelLeadershipStateMachine(panel: "demo", node: "n1")
        _ = m.leaseRenewed(id: 1, safeUntil: now + 2_000, now: now)
        #expect(m.wantsToLead(now: now) == [.campaign])
        #expect(m.campaignWon(term: 7, now: now) == [.reserveFences(term: 7)])
        #expect(m.canDecide(now: now) == nil, "no deciding before a fence block")
        let block = FenceBlock(term: 7, first: 1, last: 1000)
        #expect(m.fencesReserved(block, now: now) == [.startDeciding(block)])
        return m
    }

    @Test func campaignThenFencesThenDecide() {
        let m = leader()
        #expect(m.canDecide(now: now)?.first == 1)
        #expect(m.state == .leading(term: 7, fences: FenceBlock(term: 7, first: 1, last: 1000)))
    }

    @Test func noCampaignWithoutALeaseOrWhileSomeoneLeads() {
        var m = PanelLeadershipStateMachine(panel: "demo", node: "n1")
        #expect(m.wantsToLead(now: now) == [])
        _ = m.leaseRenewed(id: 1, safeUntil: now + 2_000, now: now)
        let other = LeaderInfo(node: "n2", term: 3, lease: 9)
        #expect(m.leaderObserved(other, now: now) == [.follow(other)])
        #expect(m.wantsToLead(now: now) == [])
        #expect(m.state == .following(leader: other))
    }

    @Test func aLeaderStopsAtTheSafeDeadlineOnATick() {
        var m = leader()
        #expect(m.canDecide(now: now + 1_999) != nil)
        #expect(m.canDecide(now: now + 2_000) == nil)
        #expect(m.tick(now: now + 2_000) == [.stopDeciding(term: 7, reason: .leaseDeadline)])
    }

    /// A paused node wakes up with input waiting (here: news that it still leads). The
    /// step-down comes first, and the input cannot put it back in charge with a dead deadline.
    @Test func aPausedLeaderStepsDownBeforeItProcessesAnyInput() {
        var m = leader()
        let woke = now + 6_000
        let ownKey = LeaderInfo(node: "n1", term: 7, lease: 1)
        let actions = m.leaderObserved(ownKey, now: woke)
        #expect(actions == [.stopDeciding(term: 7, reason: .leaseDeadline)])
        #expect(m.canDecide(now: woke) == nil)
        // The same for a fence block that was in flight during the pause.
        var n = leader()
        #expect(n.fencesReserved(FenceBlock(term: 7, first: 1001, last: 2000), now: woke).first == .stopDeciding(term: 7, reason: .leaseDeadline))
        #expect(n.canDecide(now: woke) == nil)
    }

    /// etcd lost its majority for longer than the safety margin, then came back with the
    /// lease alive: the key of the term this node decided in is given up, and the panel is
    /// campaigned for again, so its next reign has a term of its own (a nemesis run saw
    /// members get `OK JOIN ... seq=0 term=39` after term 39's seq chain had reached 247,712).
    @Test func aKeyThatOutlivedAStepDownAfterDecidingIsGivenUpForANewTerm() {
        var m = leader()
        let later = now + 2_500
        #expect(m.tick(now: later) == [.stopDeciding(term: 7, reason: .leaseDeadline)])
        let ownKey = LeaderInfo(node: "n1", term: 7, lease: 1)
        #expect(m.leaderObserved(ownKey, now: later) == [], "nothing while the lease is not renewed")
        _ = m.leaseRenewed(id: 1, safeUntil: later + 2_000, now: later)
        #expect(m.leaderObserved(ownKey, now: later) == [.resign(term: 7)])
        #expect(m.canDecide(now: later) == nil)
        #expect(m.fencesReserved(FenceBlock(term: 7, first: 1001, last: 2000), now: later) == [], "no deciding in term 7 again")
        #expect(m.resignDone(now: later) == [.follow(nil)])
        #expect(m.wantsToLead(now: later) == [.campaign])
        #expect(m.campaignWon(term: 12, now: later) == [.reserveFences(term: 12)])
        let block = FenceBlock(term: 12, first: 1001, last: 2000)
        #expect(m.fencesReserved(block, now: later) == [.startDeciding(block)])
    }

    /// A key whose fences were still being reserved when the deadline passed was never
    /// decided under: it is taken up again, once the lease is renewed.
    @Test func aKeyThatOutlivedAStepDownWhileReservingIsTakenUpAgainAfterTheLeaseIsRenewed() {
        var m = PanelLeadershipStateMachine(panel: "demo", node: "n1")
        _ = m.leaseRenewed(id: 1, safeUntil: now + 2_000, now: now)
        _ = m.wantsToLead(now: now)
        #expect(m.campaignWon(term: 7, now: now) == [.reserveFences(term: 7)])
        let later = now + 2_500
        #expect(m.tick(now: later) == [])
        let ownKey = LeaderInfo(node: "n1", term: 7, lease: 1)
        #expect(m.leaderObserved(ownKey, now: later) == [])
        _ = m.leaseRenewed(id: 1, safeUntil: later + 2_000, now: later)
        #expect(m.leaderObserved(ownKey, now: later) == [.reserveFences(term: 7)])
        #expect(m.canDecide(now: later) == nil)
        let block = FenceBlock(term: 7, first: 1, last: 1000)
        #expect(m.fencesReserved(block, now: later) == [.startDeciding(block)])
    }

    @Test func aNewTermOnTheKeyDeposesTheLeader() {
        var m = leader()
        let usurper = LeaderInfo(node: "n2", term: 12, lease: 5)
        #expect(m.leaderObserved(usurper, now: now) == [.stopDeciding(term: 7, reason: .deposed), .follow(usurper)])
        #expect(m.canDecide(now: now) == nil)
    }

    @Test func aFailedTermGuardDeposesButAnUnansweredReservationDoesNot() {
        var m = leader()
        #expect(m.fenceReservationFailed(term: 7, deposed: false, now: now) == [])
        #expect(m.canDecide(now: now) != nil)
        #expect(m.fenceReservationFailed(term: 7, deposed: true, now: now) == [.stopDeciding(term: 7, reason: .deposed), .follow(nil)])
    }

    @Test func aBlockOfAnotherTermIsNeverUsed() {
        var m = leader()
        #expect(m.fencesReserved(FenceBlock(term: 6, first: 1001, last: 2000), now: now) == [])
        let next = FenceBlock(term: 7, first: 1001, last: 2000)
        #expect(m.fencesReserved(next, now: now) == [.extendFences(FenceBlock(term: 7, first: 1, last: 2000))])
    }

    @Test func resigningStopsDecidingBeforeTheKeyIsDeleted() {
        var m = leader()
        #expect(m.resign(reason: .rebalance, now: now) == [.stopDeciding(term: 7, reason: .rebalance), .resign(term: 7)])
        #expect(m.canDecide(now: now) == nil)
        #expect(!m.countsTowardQuota)
        #expect(m.resignDone(now: now) == [.follow(nil)])
        #expect(m.isVacant)
    }

    @Test func aLostLeaseEndsLeadership() {
        var m = leader()
        #expect(m.leaseLost(now: now) == [.stopDeciding(term: 7, reason: .leaseLost), .follow(nil)])
        #expect(m.wantsToLead(now: now) == [])
    }
}
