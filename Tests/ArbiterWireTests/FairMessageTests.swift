import ArbiterCore
import Testing
@testable import ArbiterWire

@Suite("queue and buzzer messages in both forms")
struct FairMessageTests {
    let panel = PanelConfig(
        id: "hall",
        buttons: [
            ButtonConfig(id: "a", kind: .tap, group: "main"),
            ButtonConfig(id: "red", kind: .tap, group: "quiz"),
            ButtonConfig(id: "x", kind: .tap, group: "other"),
        ], groups: ["main": .queue(maxQueue: 4), "quiz": .buzzer(earlyLockoutMs: 250)])
    let bob = SessionID(4)

    func text(_ e: PanelEvent.Kind, _ format: WireFormat = .text) -> String {
        var out: [UInt8] = []
        MessageEncoder.encode(PanelEvent(seq: 9, kind: e), panel: panel, format: format, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    func text(_ r: PanelReply, _ format: WireFormat = .text) -> String {
        var out: [UInt8] = []
        MessageEncoder.encode(r, panel: panel, format: format, id: nil, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    @Test func replies() {
        #expect(text(.queued(button: 0, position: 2, owner: "alice")) == "QUEUED hall a position=2 owner=alice\n")
        #expect(
            text(.queued(button: 0, position: 2, owner: "alice"), .json)
                == #"{"type":"queued","panel":"hall","button":"a","position":2,"owner":"alice"}"# + "\n")
        #expect(text(.ranked(button: 1, rank: 2, afterMicroseconds: 37412)) == "RANKED hall red rank=2 after_us=37412\n")
        #expect(
            text(.ranked(button: 1, rank: 2, afterMicroseconds: 37412), .json)
                == #"{"type":"ranked","panel":"hall","button":"red","rank":2,"after_us":37412}"# + "\n")
        #expect(text(.denied(button: 0, reason: .queueFull)) == "DENIED hall a reason=queue-full\n")
        #expect(text(.denied(button: 1, reason: .early)) == "DENIED hall red reason=early\n")
        #expect(text(.denied(button: 1, reason: .lockedOut), .json) == #"{"type":"denied","panel":"hall","button":"red","reason":"locked-out"}"# + "\n")
        #expect(text(PanelReply.armed(group: "quiz")) == "OK ARM hall quiz\n")
        #expect(text(PanelReply.armed(group: "quiz"), .json) == #"{"type":"ok","re":"arm","panel":"hall","group":"quiz"}"# + "\n")
    }

    @Test func events() {
        #expect(text(.queued(button: 0, name: "bob", session: bob, position: 1)) == "QUEUED hall a name=bob session=s4 position=1 seq=9\n")
        #expect(
            text(.dequeued(button: 0, name: "bob", session: bob, position: 1, reason: .leave))
                == "DEQUEUED hall a name=bob session=s4 position=1 reason=leave seq=9\n")
        #expect(text(PanelEvent.Kind.armed(group: "quiz")) == "ARMED hall quiz seq=9\n")
        #expect(text(PanelEvent.Kind.armed(group: "quiz"), .json) == #"{"type":"armed","panel":"hall","group":"quiz","seq":9}"# + "\n")
        #expect(text(.closed(group: "quiz")) == "CLOSED hall quiz seq=9\n")
        let r = Ranking(button: 1, name: "bob", session: bob, rank: 3, afterMicroseconds: 120)
        #expect(text(.buzzed(r)) == "BUZZED hall red name=bob session=s4 rank=3 after_us=120 seq=9\n")
        #expect(
            text(.buzzed(r), .json)
                == #"{"type":"buzzed","panel":"hall","button":"red","name":"bob","session":"s4","rank":3,"after_us":120,"seq":9}"# + "\n")
    }

    @Test func snapshotShowsPolicyLineAndRound() {
        let snap = PanelSnapshot(
            buttons: [
                ButtonSnapshot(button: 0, state: .pressed, owner: "alice", permille: 0, ownerSession: SessionID(3)),
                ButtonSnapshot(button: 1, state: .idle, owner: nil, permille: 0),
                ButtonSnapshot(button: 2, state: .idle, owner: nil, permille: 0),
            ], members: 2, fence: 3, seq: 7,
            groups: [
                GroupSnapshot(group: "main", policy: .queue(maxQueue: 4), waiting: [WaitingSnapshot(button: 0, name: "bob", session: bob, position: 1)]),
                GroupSnapshot(
                    group: "quiz", policy: .buzzer(earlyLockoutMs: 250), round: .won,
                    ranking: [Ranking(button: 1, name: "carol", session: SessionID(5), rank: 1, afterMicroseconds: 0)]),
            ])
        #expect(
            text(.joined(snap)) == """
                BUTTON hall a kind=tap group=main policy=queue state=pressed owner=alice progress=0.000 owner_session=s3
                BUTTON hall red kind=tap group=quiz policy=buzzer state=idle owner=- progress=0.000 owner_session=-
                BUTTON hall x kind=tap group=other state=idle owner=- progress=0.000 owner_session=-
                WAITING hall a name=bob session=s4 position=1
                ROUND hall quiz state=won
                RANK hall red name=carol session=s5 rank=1 after_us=0
                OK JOIN hall members=2 fence=3 seq=7

                """)
        // No owner is JSON null here too (issue 12); the group lines name no owner at all.
        #expect(
            text(.joined(snap), .json) == """
                {"type":"button","panel":"hall","button":"a","kind":"tap","group":"main","policy":"queue","state":"pressed","owner":"alice","progress":0.000,"owner_session":"s3"}
                {"type":"button","panel":"hall","button":"red","kind":"tap","group":"quiz","policy":"buzzer","state":"idle","owner":null,"progress":0.000,"owner_session":null}
                {"type":"button","panel":"hall","button":"x","kind":"tap","group":"other","state":"idle","owner":null,"progress":0.000,"owner_session":null}
                {"type":"waiting","panel":"hall","button":"a","name":"bob","session":"s4","position":1}
                {"type":"round","panel":"hall","group":"quiz","state":"won"}
                {"type":"rank","panel":"hall","button":"red","name":"carol","session":"s5","rank":1,"after_us":0}
                {"type":"ok","re":"join","panel":"hall","members":2,"fence":3,"seq":7}

                """)
    }

    @Test func groupEventsAreRecordedWithoutAButton() throws {
        let record = try #require(HistoryRecord(event: PanelEvent(seq: 9, kind: .armed(group: "quiz")), panel: panel, at: 1000))
        #expect(record.button == "-")
        #expect(record.event == "armed")
        #expect(record.fields.first?.name == "group")
        let buzzed = try #require(
            HistoryRecord(
                event: PanelEvent(seq: 10, kind: .buzzed(Ranking(button: 1, name: "b", session: bob, rank: 2, afterMicroseconds: 5))), panel: panel, at: 1000))
        #expect(buzzed.button == "red")
        #expect(buzzed.fields.map(\.name) == ["name", "session", "rank", "after_us", "seq"])
    }
}
