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
        #expect(inbox.receive(.reply(panel: "p", term: 10, session: 2, line: [])) == .stale)
        #expect(inbox.receive(.reply(panel: "p", term: 25, session: 2, line: [])) == .deliver)
        #expect(inbox.currentTerm(of: "p") == 25)
    }

    @Test func aNewerTermNeverMovesTheGateItself() {
        var inbox = RelayInbox()
        _ = inbox.leaderChanged(panel: "p", term: 10)
        #expect(inbox.receive(.event(panel: "p", term: 30, seq: 1, line: [])) == .stale)
        #expect(inbox.currentTerm(of: "p") == 10)
    }

    @Test func followerToLeaderMessagesAreNotFencedHere() {
        var inbox = RelayInbox()
        #expect(inbox.receive(.sessionGone(origin: "n2", session: 1)) == .toLeader)
        #expect(inbox.receive(.command(RelayCommand(origin: "n2", session: 1, sessionName: "a", key: nil, panel: "p", command: [], arrivedAt: 0))) == .toLeader)
    }

    @Test func aVacancyDropsEverythingUntilTheNextTerm() {
        var inbox = RelayInbox()
        _ = inbox.leaderChanged(panel: "p", term: 10)
        #expect(inbox.leaderChanged(panel: "p", term: nil) == nil, "nothing was delivered in term 10")
        #expect(inbox.receive(.event(panel: "p", term: 10, seq: 1, line: [])) == .stale)
    }
}
