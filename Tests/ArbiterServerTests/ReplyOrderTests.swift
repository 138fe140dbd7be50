import Testing

@testable import ArbiterServer

/// Output behind replies of relayed commands, released in command order.
@Suite struct ReplyOrderTests {
    @Test func repliesOfTwoLeadersComeOutInCommandOrderWhicheverAnswersFirst() throws {
        var order = ReplyOrder()
        let first = order.reserve()
        order.hold(Array("PONG a\n".utf8))
        let second = order.reserve()
        order.hold(Array("PONG b\n".utf8))
        // The second panel's leader answers first: nothing is due yet.
        let early = order.fill(second, with: Array("GRANTED p2 b1 fence=1\n".utf8))
        #expect(early == [])
        #expect(order.isHolding)
        let filled = order.fill(first, with: Array("GRANTED p1 b1 fence=1\n".utf8))
        let due = try #require(filled)
        #expect(String(decoding: due, as: UTF8.self) == "GRANTED p1 b1 fence=1\nPONG a\nGRANTED p2 b1 fence=1\nPONG b\n")
        #expect(!order.isHolding && order.heldBytes == 0)
        let again = order.fill(first, with: [])
        #expect(again == nil)
    }

    @Test func releasingGivesWhatWasHeldInOrderWithoutTheRepliesThatNeverCame() {
        var order = ReplyOrder()
        _ = order.reserve()
        order.hold(Array("PONG a\n".utf8))
        let second = order.reserve()
        let nothingYet = order.fill(second, with: Array("OK UP p b1\n".utf8))
        #expect(nothingYet == [])
        order.hold(Array("PONG b\n".utf8))
        #expect(order.heldBytes == 25)
        #expect(String(decoding: order.releaseAll(), as: UTF8.self) == "PONG a\nOK UP p b1\nPONG b\n")
        #expect(!order.isHolding && order.heldBytes == 0)
    }
}
