import ArbiterIO
import Testing

@testable import ArbiterEtcd

/// Which members the node's etcd calls try first, on a manual clock.
@Suite struct EtcdMemberHealthTests {
    let clock = ManualClock(nanoseconds: 1_000_000_000)
    var health: EtcdMemberHealth { EtcdMemberHealth(members: 3, clock: clock) }

    @Test func aCallUnansweredForTheStallTimePutsItsMemberLast() {
        let health = self.health
        #expect(health.order(from: 0) == [0, 1, 2])
        let call = health.began(0)
        clock.advance(milliseconds: EtcdMemberHealth.stallMilliseconds - 1)
        #expect(health.order(from: 0) == [0, 1, 2], "a call still within an answer's time")
        clock.advance(milliseconds: 1)
        #expect(health.isSuspect(0))
        #expect(health.order(from: 0) == [1, 2, 0])
        #expect(health.order(from: 2) == [2, 1, 0])
        // Answered late, if only with an error of etcd's: the member is alive.
        health.ended(call, answered: true)
        #expect(health.order(from: 0) == [0, 1, 2])
    }

    @Test func aFailedCallIsRememberedForAWhileThenForgiven() {
        let health = self.health
        let call = health.began(1)
        clock.advance(milliseconds: 2_000)
        health.ended(call, answered: false)
        #expect(health.order(from: 1) == [2, 0, 1])
        clock.advance(milliseconds: EtcdMemberHealth.failureMemoryMilliseconds - 1)
        #expect(health.isSuspect(1))
        clock.advance(milliseconds: 1)
        #expect(!health.isSuspect(1))
        #expect(health.order(from: 1) == [1, 2, 0])
    }

    @Test func anUnreachableMemberGoesLastAndAnAnswerClearsIt() {
        let health = self.health
        health.unreachable(0)
        #expect(health.order(from: 0) == [1, 2, 0])
        health.ended(health.began(0), answered: true)
        #expect(!health.isSuspect(0))
    }

    @Test func whenEveryMemberIsSuspectTheOrderIsTheUsualOne() {
        // etcd electing a leader: every member slow at once.
        let health = self.health
        let calls = [health.began(0), health.began(1), health.began(2)]
        clock.advance(milliseconds: EtcdMemberHealth.stallMilliseconds)
        #expect(health.order(from: 1) == [1, 2, 0])
        #expect(!health.shouldLeave(0), "nowhere better to go")
        health.ended(calls[2], answered: true)
        #expect(health.shouldLeave(0))
        #expect(!health.shouldLeave(2))
        #expect(health.order(from: 0) == [2, 0, 1])
    }

    @Test func anEndedCallIsForgottenWhateverItsToken() {
        let health = self.health
        let call = health.began(2)
        health.ended(call, answered: true)
        health.ended(call, answered: false)  // a second end of one call changes nothing
        #expect(!health.isSuspect(2))
    }

    @Test func aMemberStalledNowGoesBehindOnesThatOnlyFailedAWhileAgo() {
        // Two members were down a few seconds ago (an outage that is over); the third
        // freezes now: calls must go to the two, not round to the frozen one.
        let health = self.health
        health.unreachable(1)
        health.unreachable(2)
        clock.advance(milliseconds: 1_000)
        _ = health.began(0)
        clock.advance(milliseconds: EtcdMemberHealth.stallMilliseconds)
        #expect(health.order(from: 0) == [1, 2, 0])
        #expect(health.shouldLeave(0))
        #expect(!health.shouldLeave(1))
    }
}
