import Testing
@testable import ArbiterCluster

@Suite struct RelayTermGateTests {
    @Test func onlyTheCurrentTermPasses() {
        var gate = RelayTermGate()
        #expect(gate.admit(term: 5) == false, "nothing passes before a leader is known")
        #expect(gate.leaderChanged(to: 5) == nil)
        #expect(gate.admit(term: 5) == true)
        #expect(gate.admit(term: 4) == false)
        #expect(gate.leaderChanged(to: 9) == 5, "members saw term 5: they are owed a failover")
        #expect(gate.admit(term: 5) == false, "the old leader's late events are dropped")
        #expect(gate.admit(term: 9) == true)
        #expect(gate.leaderChanged(to: nil) == 9)
        #expect(gate.admit(term: 9) == false)
    }

    @Test func aTermNothingWasDeliveredInOwesNoFailover() {
        var gate = RelayTermGate()
        _ = gate.leaderChanged(to: 5)
        #expect(gate.leaderChanged(to: 6) == nil)
        #expect(gate.leaderChanged(to: 6) == nil)
    }
}
