import Testing

@testable import ArbiterServer

/// This node's own answers held behind replies of relayed commands, released in command
/// order.
@Suite struct ReplyOrderTests {
    @Test func heldAnswersGoOutOnceEveryEarlierSlotIsAnsweredWhicheverLeaderAnswersFirst() {
        var order = ReplyOrder()
        let first = order.reserve()
        order.hold(Array("PONG a\n".utf8))
        let second = order.reserve()
        order.hold(Array("PONG b\n".utf8))
        // The second panel's leader answers first: nothing held is due yet.
        let early = order.answered(second)
        #expect(early == [])
        #expect(order.isHolding && order.heldBytes == 14)
        let due = order.answered(first)
        #expect(due.map { String(decoding: $0, as: UTF8.self) } == "PONG a\nPONG b\n")
        #expect(!order.isHolding && order.heldBytes == 0)
        let again = order.answered(first)
        #expect(again == nil)
    }

    @Test func releasingGivesWhatWasHeldInOrder() {
        var order = ReplyOrder()
        _ = order.reserve()
        order.hold(Array("PONG a\n".utf8))
        _ = order.reserve()
        order.hold(Array("PONG b\n".utf8))
        #expect(String(decoding: order.releaseAll(), as: UTF8.self) == "PONG a\nPONG b\n")
        #expect(!order.isHolding && order.heldBytes == 0)
    }

    /// Output made while a KICK asked of another node waits goes out after its answer,
    /// once no other KICK waits; a connection's last words take it along.
    @Test func outputWaitsBehindEveryKickStillUnanswered() {
        var order = ReplyOrder()
        let one = order.reserveKick()
        let two = order.reserveKick()
        #expect(order.kicksAwaited == 2 && order.isHolding)
        order.holdForKick(Array("LEFT a\n".utf8))
        #expect(order.heldBytes == 7)
        _ = order.answered(one)
        #expect(order.kickAnswered() == [], "another KICK still waits")
        order.holdForKick(Array("LEFT b\n".utf8))
        _ = order.answered(two)
        #expect(String(decoding: order.kickAnswered(), as: UTF8.self) == "LEFT a\nLEFT b\n")
        #expect(order.kicksAwaited == 0 && !order.isHolding && order.heldBytes == 0)

        _ = order.reserveKick()
        order.holdForKick(Array("LEFT c\n".utf8))
        #expect(String(decoding: order.releaseAll(), as: UTF8.self) == "LEFT c\n")
        #expect(order.kicksAwaited == 0 && order.heldBytes == 0)
    }
}
