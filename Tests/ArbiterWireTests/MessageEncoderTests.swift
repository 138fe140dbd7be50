import ArbiterCore
import Testing
@testable import ArbiterWire

@Suite("server messages in both forms")
struct MessageEncoderTests {
    let panel = PanelConfig.demo
    let alice = Owner(name: "alice", session: SessionID(3), fence: 12)

    func text(_ e: PanelEvent.Kind, seq: UInt64 = 41, _ format: WireFormat = .text) -> String {
        var out: [UInt8] = []
        MessageEncoder.encode(PanelEvent(seq: seq, kind: e), panel: panel, format: format, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    func text(_ r: PanelReply, _ format: WireFormat = .text, id: CommandID? = nil) -> String {
        var out: [UInt8] = []
        MessageEncoder.encode(r, panel: panel, format: format, id: id, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    @Test func protocolExampleInJSON() {
        #expect(
            text(.granted(button: 0, fence: 12), .json, id: .string("c7"))
                == #"{"type":"granted","panel":"demo","button":"b1","fence":12,"id":"c7"}"# + "\n")
        #expect(
            text(.pressed(button: 0, owner: alice), .json)
                == #"{"type":"pressed","panel":"demo","button":"b1","owner":"alice","session":"s3","fence":12,"seq":41}"# + "\n")
    }

    @Test func repliesInText() {
        #expect(text(.granted(button: 0, fence: 12)) == "GRANTED demo b1 fence=12\n")
        #expect(
            text(.deniedBusy(button: 1, owner: "alice", ownerSession: SessionID(3), active: 0))
                == "DENIED demo b2 reason=busy owner=alice active=b1 owner_session=s3\n")
        #expect(
            text(.deniedBusy(button: 1, owner: "alice", ownerSession: SessionID(3), active: 0), .json)
                == #"{"type":"denied","panel":"demo","button":"b2","reason":"busy","owner":"alice","active":"b1","owner_session":"s3"}"# + "\n")
        #expect(text(.deniedForbidden(buttonID: "b2")) == "DENIED demo b2 reason=forbidden\n")
        #expect(text(.released(verb: .up, button: 3, ended: .fired)) == "OK UP demo sos ended=fired\n")
        #expect(text(.released(verb: .cancel, button: 0, ended: nil)) == "OK CANCEL demo b1\n")
        #expect(text(.error(.notOwner, "b1 is held by bob")) == "ERROR not-owner b1 is held by bob\n")
        #expect(text(.error(.notOwner, "x"), .json, id: .number("1.5")) == #"{"type":"error","code":"not-owner","message":"x","id":1.5}"# + "\n")
    }

    @Test func joinSnapshot() {
        let snap = PanelSnapshot(
            buttons: [
                ButtonSnapshot(button: 0, state: .pressed, owner: "alice", permille: 0, ownerSession: SessionID(3)),
                ButtonSnapshot(button: 3, state: .idle, owner: nil, permille: 0),
            ], members: 2, fence: 12, seq: 40)
        #expect(
            text(.joined(snap)) == """
                BUTTON demo b1 kind=tap group=main state=pressed owner=alice progress=0.000 owner_session=s3
                BUTTON demo sos kind=hold group=emergency state=idle owner=- progress=0.000 owner_session=-
                OK JOIN demo members=2 fence=12 seq=40

                """)
        // No owner is JSON null, as in /api/panels; the text form keeps `-`.
        #expect(
            text(.joined(snap), .json).hasPrefix(
                #"{"type":"button","panel":"demo","button":"b1","kind":"tap","group":"main","state":"pressed","owner":"alice","progress":0.000,"owner_session":"s3"}"#
                    + "\n"
                    + #"{"type":"button","panel":"demo","button":"sos","kind":"hold","group":"emergency","state":"idle","owner":null,"progress":0.000,"owner_session":null}"#
                    + "\n"))
        #expect(text(.joined(snap), .json).hasSuffix(#"{"type":"ok","re":"join","panel":"demo","members":2,"fence":12,"seq":40}"# + "\n"))
    }

    @Test func everyEventInText() {
        #expect(text(.pressed(button: 0, owner: alice)) == "PRESSED demo b1 owner=alice session=s3 fence=12 seq=41\n")
        #expect(text(.fired(button: 3, owner: alice)) == "FIRED demo sos owner=alice session=s3 fence=12 seq=41\n")
        #expect(text(.progress(button: 3, permille: 1000)) == "PROGRESS demo sos value=1.000 seq=41\n")
        #expect(text(.progress(button: 3, permille: 33)) == "PROGRESS demo sos value=0.033 seq=41\n")
        #expect(text(.midway(button: 3)) == "MIDWAY demo sos seq=41\n")
        #expect(text(.tapped(button: 4, owner: alice)) == "TAPPED demo talk owner=alice session=s3 fence=12 seq=41\n")
        #expect(text(.started(button: 4, owner: alice)) == "STARTED demo talk owner=alice session=s3 fence=12 seq=41\n")
        #expect(
            text(.stopped(button: 4, owner: alice, heldMs: 1200, discarded: false, reason: .up))
                == "STOPPED demo talk owner=alice session=s3 fence=12 held_ms=1200 discarded=false reason=up seq=41\n")
        #expect(text(.cancelled(button: 4, owner: alice)) == "CANCELLED demo talk owner=alice session=s3 fence=12 seq=41\n")
        #expect(text(.released(button: 0, reason: .timeout, owner: alice)) == "RELEASED demo b1 reason=timeout owner=alice fence=12 seq=41\n")
        #expect(text(.joined(name: "bob", session: SessionID(4))) == "JOINED demo name=bob session=s4 seq=41\n")
        #expect(text(.left(name: "bob", session: SessionID(4))) == "LEFT demo name=bob session=s4 seq=41\n")
        #expect(
            text(.stopped(button: 4, owner: alice, heldMs: 12, discarded: true, reason: .timeout), .json)
                == #"{"type":"stopped","panel":"demo","button":"talk","owner":"alice","session":"s3","fence":12,"held_ms":12,"discarded":true,"reason":"timeout","seq":41}"#
                + "\n")
        #expect(text(.progress(button: 3, permille: 500), .json) == #"{"type":"progress","panel":"demo","button":"sos","value":0.500,"seq":41}"# + "\n")
    }

    /// `leader=` is cluster mode's alone: a single node's PANEL line has no such field.
    @Test func aPanelLineNamesItsLeaderInClusterModeOnly() {
        #expect(
            MessageEncoder.text(.panel(id: "demo", buttons: 5, members: 2, title: "Demo", leader: .singleNode))
                == "PANEL demo buttons=5 members=2 title=\"Demo\"\n")
        #expect(
            MessageEncoder.text(.panel(id: "demo", buttons: 5, members: 2, title: "Demo", leader: .cluster("n2")))
                == "PANEL demo buttons=5 members=2 title=\"Demo\" leader=n2\n")
        #expect(
            MessageEncoder.text(.panel(id: "demo", buttons: 5, members: 2, title: "Demo", leader: .cluster(nil)))
                == "PANEL demo buttons=5 members=2 title=\"Demo\" leader=-\n")
        #expect(
            MessageEncoder.text(.panel(id: "demo", buttons: 5, members: 2, title: "Demo", leader: .cluster("n2")), format: .json)
                == #"{"type":"panel","panel":"demo","buttons":5,"members":2,"title":"Demo","leader":"n2"}"# + "\n")
        #expect(
            MessageEncoder.text(.panel(id: "demo", buttons: 5, members: 2, title: "Demo", leader: .cluster(nil)), format: .json)
                == #"{"type":"panel","panel":"demo","buttons":5,"members":2,"title":"Demo","leader":null}"# + "\n")
        #expect(
            MessageEncoder.text(.panel(id: "demo", buttons: 5, members: 2, title: "Demo"), format: .json)
                == #"{"type":"panel","panel":"demo","buttons":5,"members":2,"title":"Demo"}"# + "\n")
    }

    @Test func serverMessages() {
        #expect(MessageEncoder.text(.welcome(session: SessionID(1), name: "guest-1")) == "WELCOME session=s1 name=guest-1 proto=1\n")
        #expect(
            MessageEncoder.text(.welcome(session: SessionID(7), name: "guest-7"), format: .json)
                == #"{"type":"welcome","session":"s7","name":"guest-7","proto":1}"# + "\n")
        #expect(MessageEncoder.text(.hello(name: "alice", session: SessionID(3), role: "presser")) == "OK HELLO name=alice session=s3 role=presser\n")
        #expect(MessageEncoder.text(.panel(id: "demo", buttons: 5, members: 2, title: "Demo")) == "PANEL demo buttons=5 members=2 title=\"Demo\"\n")
        #expect(
            MessageEncoder.text(.panel(id: "q", buttons: 1, members: 0, title: "Quiz \"night\""))
                == "PANEL q buttons=1 members=0 title=\"Quiz \\\"night\\\"\"\n")
        #expect(MessageEncoder.text(.okCount(verb: "PANELS", panel: nil, count: 1)) == "OK PANELS count=1\n")
        #expect(
            MessageEncoder.text(.okCount(verb: "HISTORY", panel: "demo", count: 0), format: .json)
                == #"{"type":"ok","re":"history","panel":"demo","count":0}"# + "\n")
        #expect(MessageEncoder.text(.pong(token: "x y")) == "PONG \"x y\"\n")
        #expect(MessageEncoder.text(.pong(token: nil), format: .json, id: .string("p")) == #"{"type":"pong","id":"p"}"# + "\n")
        #expect(MessageEncoder.text(.helpLine("DOWN <panel> <button>")) == "# DOWN <panel> <button>\n")
        #expect(MessageEncoder.text(.ok(verb: "QUIT", panel: nil)) == "OK QUIT\n")
        #expect(MessageEncoder.text(.okKick(SessionID(9))) == "OK KICK s9\n")
    }

    @Test func nothingAPeerSendsCanBreakALine() {
        let evil = "bad\r\nWELCOME session=s1"
        #expect(MessageEncoder.text(.error(.unknownCommand, evil)) == "ERROR unknown-command bad??WELCOME session=s1\n")
        #expect(MessageEncoder.text(.pong(token: evil)) == "PONG \"bad??WELCOME session=s1\"\n")
        #expect(MessageEncoder.text(.pong(token: evil), format: .json) == #"{"type":"pong","token":"bad\r\nWELCOME session=s1"}"# + "\n")
        // C1 controls (NEL is a line break to some terminals) too; other accents stay.
        #expect(MessageEncoder.text(.pong(token: "a\u{85}b\u{9F}c")) == "PONG \"a?b?c\"\n")
        #expect(MessageEncoder.text(.pong(token: "x \u{85}")) == "PONG \"x ?\"\n")
        #expect(MessageEncoder.text(.pong(token: "caf\u{E9} \u{C2}\u{A0}")) == "PONG \"caf\u{E9} \u{C2}\u{A0}\"\n")
        #expect(MessageEncoder.text(.error(.unknownCommand, "\u{85}x")) == "ERROR unknown-command ?x\n")
        // U+2028/U+2029 split lines in JavaScript and Python: `?` in text, like C1; other
        // characters starting with the same byte (E2) stay as they are.
        #expect(MessageEncoder.text(.pong(token: "a\u{2028}b\u{2029}c")) == "PONG \"a?b?c\"\n")
        #expect(MessageEncoder.text(.pong(token: "x\u{2028}")) == "PONG \"x?\"\n")
        #expect(MessageEncoder.text(.pong(token: "\u{2192}\u{2014}")) == "PONG \u{2192}\u{2014}\n")
        #expect(
            MessageEncoder.text(.error(.unknownCommand, "no verb \u{2028}X; HELP lists them"))
                == "ERROR unknown-command no verb ?X; HELP lists them\n")
        // In JSON they are escaped, as are U+2028/U+2029: line-splitting readers stay whole.
        #expect(
            MessageEncoder.text(.pong(token: "a\u{85}b\u{2028}c\u{2029}\u{E9}"), format: .json)
                == #"{"type":"pong","token":"a\u0085b\u2028c\u2029"# + "\u{E9}" + #""}"# + "\n")
    }

    @Test func historyRecordRoundTrip() throws {
        let event = PanelEvent(seq: 41, kind: .released(button: 0, reason: .fired, owner: alice))
        let record = try #require(HistoryRecord(event: event, panel: panel, at: 1_764_460_800_000))
        #expect(
            MessageEncoder.text(.record(record))
                == "RECORD demo b1 event=released at=1764460800000 reason=fired owner=alice fence=12 seq=41\n")
        let json = MessageEncoder.text(.record(record), format: .json)
        let parsed = try JSONParser.parse(Array(json.utf8.dropLast()))
        #expect(HistoryRecord(json: parsed) == record)
        #expect(record.fence == 12)
        #expect(HistoryRecord(event: PanelEvent(seq: 1, kind: .midway(button: 3)), panel: panel, at: 0) == nil)
    }
}

@Suite("fast text encoding agrees with the general one")
struct FastEncodingTests {
    let panel = PanelConfig.demo
    let owner = Owner(name: "alice.b-2", session: SessionID(31), fence: 18_446_744_073_709_551_615)

    @Test func repliesAndEvents() {
        let names = PanelNames(panel)
        let replies: [PanelReply] = [
            .granted(button: 0, fence: 0), .granted(button: 4, fence: 987_654),
            .released(verb: .up, button: 3, ended: nil), .released(verb: .cancel, button: 1, ended: nil),
            .released(verb: .up, button: 3, ended: .fired), .deniedBusy(button: 1, owner: "x", ownerSession: SessionID(2), active: 0),
        ]
        for r in replies {
            var fast: [UInt8] = []
            var general: [UInt8] = []
            MessageEncoder.encode(r, names: names, format: .text, id: nil, into: &fast)
            MessageEncoder.encode(r, panel: panel, format: .text, id: nil, into: &general)
            #expect(fast == general, "\(r)")
        }
        let kinds: [PanelEvent.Kind] = [
            .pressed(button: 2, owner: owner), .fired(button: 3, owner: owner),
            .released(button: 4, reason: .timeout, owner: owner), .midway(button: 3),
        ]
        for k in kinds {
            var fast: [UInt8] = []
            var general: [UInt8] = []
            MessageEncoder.encode(PanelEvent(seq: 77, kind: k), names: names, format: .text, into: &fast)
            MessageEncoder.encode(PanelEvent(seq: 77, kind: k), panel: panel, format: .text, into: &general)
            #expect(fast == general, "\(k)")
        }
    }
}
