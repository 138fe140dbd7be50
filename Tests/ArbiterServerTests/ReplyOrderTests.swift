import Testing

@testable import ArbiterServer

/// One connection's output when some of its commands are answered by other nodes: replies
/// in command order, each panel's output in the order it was made, events behind an
/// awaited KICK's answer.
@Suite struct ReplyOrderTests {
    /// What goes out now for `text`, as `Connection.put` writes it.
    private func put(_ output: ReplyOrder.Output, _ text: String, epoch: UInt64 = 0, stampMs: Int64 = 0, into order: inout ReplyOrder) -> String {
        if order.passesStraight(output) {
            return text + String(decoding: order.wentStraight(output).bytes, as: UTF8.self)
        }
        return String(decoding: order.route(output, Array(text.utf8), epoch: epoch, stampMs: stampMs).bytes, as: UTF8.self)
    }

    @Test func repliesGoOutInCommandOrderWhicheverLeaderAnswersFirst() {
        var order = ReplyOrder()
        let first = order.reserve()
        #expect(put(.answer(panel: nil), "PONG a\n", into: &order) == "")
        let second = order.reserve()
        #expect(put(.answer(panel: nil), "PONG b\n", into: &order) == "")
        // The second panel's leader answers first: it waits for the first reply.
        #expect(put(.reply(token: second, panel: 2), "GRANTED p2 b1\n", into: &order) == "")
        #expect(order.isHolding && order.heldBytes == 28)
        #expect(put(.reply(token: first, panel: 1), "GRANTED p1 b1\n", into: &order) == "GRANTED p1 b1\nPONG a\nGRANTED p2 b1\nPONG b\n")
        #expect(!order.isHolding && order.heldBytes == 0)
        // A reply whose slot is gone is output like any other.
        #expect(put(.reply(token: first, panel: 1), "late\n", into: &order) == "late\n")
    }

    @Test func aPanelsOutputStaysBehindItsKeptReplyWhileOtherPanelsGoOn() {
        var order = ReplyOrder()
        let one = order.reserve()
        let two = order.reserve()
        #expect(put(.reply(token: two, panel: 2), "GRANTED p2\n", into: &order) == "")
        // The event its command caused must not overtake it.
        #expect(put(.event(panel: 2), "PRESSED p2\n", into: &order) == "")
        // Panel 1 keeps nothing: its events go out as they come.
        #expect(put(.event(panel: 1), "PRESSED p1 other\n", into: &order) == "PRESSED p1 other\n")
        #expect(put(.reply(token: one, panel: 1), "DENIED p1\n", into: &order) == "DENIED p1\nGRANTED p2\nPRESSED p2\n")
        #expect(put(.event(panel: 2), "RELEASED p2\n", into: &order) == "RELEASED p2\n")
    }

    /// A panel this node decides answers at once, but not before the replies owed for
    /// earlier commands; its events wait behind that answer.
    @Test func aLocalDecisionWaitsForEarlierRelayedReplies() {
        var order = ReplyOrder()
        let relayed = order.reserve()
        #expect(put(.answer(panel: 3), "OK JOIN p3\n", into: &order) == "")
        #expect(put(.event(panel: 3), "PRESSED p3\n", into: &order) == "")
        #expect(put(.reply(token: relayed, panel: 1), "OK JOIN p1\n", into: &order) == "OK JOIN p1\nOK JOIN p3\nPRESSED p3\n")
        #expect(put(.answer(panel: 3), "OK LEAVE p3\n", into: &order) == "OK LEAVE p3\n")
    }

    @Test func eventsWaitBehindEveryKickStillUnansweredButEarlierRepliesDoNot() {
        var order = ReplyOrder()
        let down = order.reserve()
        let one = order.reserve(kick: true)
        let two = order.reserve(kick: true)
        #expect(order.kicksAwaited == 2)
        #expect(put(.event(panel: 2), "LEFT a\n", into: &order) == "")
        #expect(put(.reply(token: down, panel: 1), "GRANTED p1\n", into: &order) == "GRANTED p1\n")
        #expect(put(.reply(token: one, panel: nil), "OK KICK 1\n", into: &order) == "OK KICK 1\n", "another KICK still waits")
        #expect(put(.event(panel: nil), "LEFT b\n", into: &order) == "")
        #expect(put(.reply(token: two, panel: nil), "OK KICK 2\n", into: &order) == "OK KICK 2\nLEFT a\nLEFT b\n")
        #expect(order.kicksAwaited == 0 && !order.isHolding && order.heldBytes == 0)
    }

    /// A command sent before a KICK keeps its place before the KICK's answer, even when
    /// its panel's leader made an event (the kick's) before the reply; what that leader
    /// makes after the reply still follows the event.
    @Test func aReplyOwedBeforeAKickKeepsItsPlaceAndLaterEventsFollowTheKept() {
        var order = ReplyOrder()
        let down = order.reserve()
        let kick = order.reserve(kick: true)
        #expect(put(.event(panel: 1), "RELEASED p1 victim\n", into: &order) == "")
        #expect(put(.reply(token: down, panel: 1), "GRANTED p1\n", into: &order) == "GRANTED p1\n")
        #expect(put(.event(panel: 1), "PRESSED p1\n", into: &order) == "")
        #expect(put(.reply(token: kick, panel: nil), "OK KICK\n", into: &order) == "OK KICK\nRELEASED p1 victim\nPRESSED p1\n")
        #expect(!order.isHolding && order.heldBytes == 0)
    }

    /// A reply of this node's own panel decided while a relayed reply is owed: a refusal
    /// found here for a later command keeps its place after the relayed reply.
    @Test func aLocalAnswerOfAPanelStaysAfterThatPanelsEarlierRelayedReply() {
        var order = ReplyOrder()
        let relayed = order.reserve()
        #expect(put(.answer(panel: 1), "ERROR unavailable p1 b2\n", into: &order) == "")
        #expect(put(.reply(token: relayed, panel: 1), "GRANTED p1 b1\n", into: &order) == "GRANTED p1 b1\nERROR unavailable p1 b2\n")
    }

    /// What was kept goes out marked with the oldest lease epoch and time limit among it:
    /// a leader's frame kept past its limit is stale at the write, as if sent at once.
    @Test func keptOutputCarriesTheOldestLeaseEpochAndTimeLimit() {
        var order = ReplyOrder()
        let first = order.reserve()
        let second = order.reserve()
        #expect(put(.reply(token: second, panel: 1), "GRANTED p1\n", epoch: 7, stampMs: 1_000, into: &order) == "")
        let due = order.route(.reply(token: first, panel: 2), Array("GRANTED p2\n".utf8), epoch: 8, stampMs: 2_000)
        #expect(String(decoding: due.bytes, as: UTF8.self) == "GRANTED p2\nGRANTED p1\n")
        #expect(due.epoch == 7 && due.stampMs == 1_000)
    }

    @Test func lastWordsTakeEverythingKeptWithTheOldestLeaseEpoch() {
        var order = ReplyOrder()
        _ = order.reserve()
        #expect(put(.answer(panel: nil), "PONG a\n", epoch: 7, into: &order) == "")
        let second = order.reserve(kick: true)
        #expect(put(.reply(token: second, panel: nil), "OK KICK\n", epoch: 9, stampMs: 5, into: &order) == "")
        let released = order.releaseAll()
        #expect(String(decoding: released.bytes, as: UTF8.self) == "PONG a\nOK KICK\n")
        #expect(released.epoch == 7 && released.stampMs == 5)
        #expect(!order.isHolding && order.heldBytes == 0 && order.kicksAwaited == 0)
    }

    /// A unit whose answer a path lost is found once it is owed past the limit, and only
    /// then; answered, what waited behind it goes out.
    @Test func aUnitOwedPastTheLimitIsFoundAndItsAnswerLetsTheRestOut() {
        var order = ReplyOrder()
        let lost = order.reserve(at: 1_000)
        let later = order.reserve(at: 1_500)
        #expect(put(.reply(token: later, panel: 1), "GRANTED p1\n", into: &order) == "")
        #expect(put(.answer(panel: nil), "PONG a\n", into: &order) == "")
        #expect(order.overdue(at: 15_999, limitMs: 15_000) == nil)
        #expect(order.overdue(at: 16_000, limitMs: 15_000) == lost)
        #expect(put(.reply(token: lost, panel: nil), "ERROR unavailable\n", into: &order) == "ERROR unavailable\nGRANTED p1\nPONG a\n")
        #expect(!order.isHolding && order.overdue(at: 99_000, limitMs: 15_000) == nil)
        // The first unanswered one is found even behind an answered one, and a unit
        // taken without a time is never counted overdue.
        let answered = order.reserve(at: 1_000)
        let second = order.reserve(at: 2_000)
        _ = order.reserve()
        #expect(put(.reply(token: answered, panel: 1), "OK\n", into: &order) == "OK\n")
        #expect(order.overdue(at: 99_000, limitMs: 15_000) == second)
        #expect(put(.reply(token: second, panel: 1), "OK 2\n", into: &order) == "OK 2\n")
        #expect(order.overdue(at: 99_000, limitMs: 15_000) == nil && order.isHolding)
    }
}
