import Testing
@testable import ArbiterCluster

@Suite struct RelayInboxTests {
    @Test func onlyTheCurrentTermAsEtcdSaysIsDelivered() {
        var inbox = RelayInbox()
        let event = RelayMessage.event(panel: "p", term: 10, seq: 1, line: [])
        #expect(inbox.receive(event) == .stale, "no term known yet")
        #expect(inbox.leaderChanged(panel: "p", term: 10) == nil)
        #expect(inbox.receive(event) == .deliver)
        #expect(inbox.receive(.reply(panel: "p", term: 10, session: 1, line: [])) == .deliver)
        #expect(inbox.receive(.event(panel: "other", term: 10, seq: 1, line: [])) == .stale)
        // etcd shows a new term: the old leader's late events are dropped, and the members
        // are owed the failover release for term 10.
        #expect(inbox.leaderChanged(panel: "p", term: 25) == 10)
        #expect(inbox.receive(.event(panel: "p", term: 10, seq: 2, line: [])) == .stale)
        #expect(inbox.receive(.snapshot(panel: "p", term: 10, seq: 2, request: 1, line: [])) == .stale)
        #expect(inbox.receive(.snapshot(panel: "p", term: 25, seq: 0, request: 1, line: [])) == .deliver)
        #expect(inbox.currentTerm(of: "p") == 25)
    }

    @Test func aTermAnnouncementNeverMovesTheGateItself() {
        var inbox = RelayInbox()
        _ = inbox.leaderChanged(panel: "p", term: 10)
        #expect(inbox.receive(.term(panel: "p", term: 30, leader: "n3")) == .checkEtcd(panel: "p", term: 30))
        #expect(inbox.currentTerm(of: "p") == 10)
        #expect(inbox.receive(.event(panel: "p", term: 30, seq: 1, line: [])) == .stale)
        #expect(inbox.receive(.term(panel: "p", term: 9, leader: "n1")) == .stale)
        #expect(inbox.receive(.term(panel: "p", term: 10, leader: "n1")) == .deliver)
    }

    @Test func followerToLeaderMessagesAreNotFencedHere() {
        var inbox = RelayInbox()
        #expect(inbox.receive(.sessionGone(origin: "n2", session: 1)) == .toLeader)
        #expect(inbox.receive(.snapshotRequest(panel: "p", request: 1)) == .toLeader)
    }

    @Test func aVacancyDropsEverythingUntilTheNextTerm() {
        var inbox = RelayInbox()
        _ = inbox.leaderChanged(panel: "p", term: 10)
        #expect(inbox.leaderChanged(panel: "p", term: nil) == nil, "nothing was delivered in term 10")
        #expect(inbox.receive(.event(panel: "p", term: 10, seq: 1, line: [])) == .stale)
    }
}
