import ArbiterCore
import Testing

@testable import ArbiterWire

/// `RANKING` on the wire, both forms, and a buzzer group's `announce` in the config.
@Suite("RANKING and announce")
struct RankingMessageTests {
    let panel = PanelConfig(
        id: "hall", buttons: [ButtonConfig(id: "red", kind: .tap, group: "quiz"), ButtonConfig(id: "blue", kind: .tap, group: "quiz")],
        groups: ["quiz": .buzzer(earlyLockoutMs: 250, announce: 2)])

    func encode(_ r: PanelReply, _ format: WireFormat, id: CommandID? = nil) -> String {
        var out: [UInt8] = []
        MessageEncoder.encode(r, panel: panel, format: format, id: id, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    @Test func parsedInBothForms() {
        if case .command(let c) = TextCommandParser.parse("ranking hall quiz") {
            #expect(c.request == .ranking(panel: "hall", group: "quiz"))
        } else {
            Issue.record("RANKING did not parse")
        }
        if case .failure(let e) = TextCommandParser.parse("RANKING hall") {
            #expect(e.code == .badSyntax)
        } else {
            Issue.record("RANKING without a group parsed")
        }
    }

    @Test func theTableInText() {
        let ranking = [
            Ranking(button: 0, name: "ann", session: SessionID(1), rank: 1, afterMicroseconds: 0),
            Ranking(button: 1, name: "bo", session: SessionID(2), rank: 2, afterMicroseconds: 812),
        ]
        #expect(
            encode(.ranking(group: "quiz", round: .won, ranking: ranking), .text)
                == """
                ROUND hall quiz state=won
                RANK hall red name=ann session=s1 rank=1 after_us=0
                RANK hall blue name=bo session=s2 rank=2 after_us=812
                OK RANKING hall quiz ranked=2

                """)
        #expect(encode(.ranking(group: "quiz", round: .closed, ranking: []), .text) == "ROUND hall quiz state=closed\nOK RANKING hall quiz ranked=0\n")
        #expect(
            encode(.ranking(group: "quiz", round: .armed, ranking: []), .json, id: .string("r1"))
                == #"{"type":"round","panel":"hall","group":"quiz","state":"armed","id":"r1"}"# + "\n"
                + #"{"type":"ok","re":"ranking","panel":"hall","group":"quiz","ranked":0,"id":"r1"}"# + "\n")
    }

    func decode(_ group: String) throws(ConfigDecoder.Failure) -> PanelConfig {
        try ConfigDecoder.decode(Array(#"{"panels":[{"id":"p","buttons":[{"id":"a","group":"quiz"}],"groups":{"quiz":\#(group)}}]}"#.utf8))[0]
    }

    func failure(_ group: String) -> String? {
        do { _ = try decode(group); return nil } catch { return error.description }
    }

    @Test func announceIsConfigured() throws {
        #expect(try decode(#"{"policy":"buzzer"}"#).policy(ofGroup: "quiz") == .buzzer(earlyLockoutMs: 250, announce: 10, decisionWindowUs: 2000))
        #expect(
            try decode(#"{"policy":"buzzer","announce":100000}"#).policy(ofGroup: "quiz")
                == .buzzer(earlyLockoutMs: 250, announce: 100_000, decisionWindowUs: 2000))
        #expect(failure(#"{"policy":"buzzer","announce":0}"#) == "panels[0].groups.quiz.announce: must be between 1 and 100000, not 0")
        #expect(failure(#"{"policy":"buzzer","announce":"top"}"#)?.hasPrefix("panels[0].groups.quiz.announce: must be a whole number") == true)
        #expect(failure(#"{"policy":"queue","announce":3}"#)?.contains("announce") == true)
    }
}
