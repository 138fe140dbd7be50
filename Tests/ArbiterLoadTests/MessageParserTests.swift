import Testing
import ArbiterCore
import ArbiterWire
@testable import ArbiterLoadKit

/// The generator's byte parsers against the server's own encoder, in both forms: text
/// and JSON must decode to the same `WireMessage`.
@Suite struct MessageParserTests {
    static let panel = PanelConfig(
        id: "load",
        buttons: [
            ButtonConfig(id: "b1", kind: .tap, group: "g1"),
            ButtonConfig(id: "h1", kind: .hold, group: "g2"),
            ButtonConfig(id: "t1", kind: .talk, group: "g3"),
        ])
    static let table = ButtonTable(
        panel: "load",
        buttons: [
            SnapshotButton(id: "b1", kind: .tap, group: "g1"),
            SnapshotButton(id: "h1", kind: .hold, group: "g2"),
            SnapshotButton(id: "t1", kind: .talk, group: "g3"),
        ])
    let owner = Owner(name: "c12", session: SessionID(7), fence: 41)

    /// Parses every line of `bytes` with the parser for its form.
    static func parse(_ bytes: [UInt8]) -> [WireMessage] {
        var result: [WireMessage] = []
        bytes.withUnsafeBufferPointer { buffer in
            var start = 0
            for i in 0..<buffer.count where buffer[i] == 0x0A {
                if buffer[start] == UInt8(ascii: "{") {
                    result.append(JSONMessageParser.parse(buffer, start..<i, buttons: table))
                } else {
                    result.append(LineMessageParser.parse(buffer, start..<i, buttons: table))
                }
                start = i + 1
            }
        }
        return result
    }

    static func both(_ event: PanelEvent) -> (WireMessage, WireMessage) {
        var text: [UInt8] = []
        var json: [UInt8] = []
        MessageEncoder.encode(event, panel: panel, format: .text, into: &text)
        MessageEncoder.encode(event, panel: panel, format: .json, into: &json)
        return (parse(text)[0], parse(json)[0])
    }

    static func both(_ reply: PanelReply) -> ([WireMessage], [WireMessage]) {
        var text: [UInt8] = []
        var json: [UInt8] = []
        MessageEncoder.encode(reply, panel: panel, format: .text, id: nil, into: &text)
        MessageEncoder.encode(reply, panel: panel, format: .json, id: .string("x1"), into: &json)
        return (parse(text), parse(json))
    }

    @Test func pressedInBothForms() {
        let (text, json) = Self.both(PanelEvent(seq: 99, kind: .pressed(button: 0, owner: owner)))
        var expected = WireMessage(kind: .pressed)
        expected.button = 0
        expected.owner = 12
        expected.session = 7
        expected.fence = 41
        expected.seq = 99
        #expect(text == expected)
        #expect(json == expected)
    }

    @Test func everyEventKindAgreesAcrossForms() {
        let kinds: [PanelEvent.Kind] = [
            .fired(button: 1, owner: owner), .progress(button: 1, permille: 500), .midway(button: 1),
            .tapped(button: 2, owner: owner), .started(button: 2, owner: owner),
            .stopped(button: 2, owner: owner, heldMs: 420, discarded: false, reason: .up),
            .cancelled(button: 2, owner: owner), .released(button: 1, reason: .fired, owner: owner),
            .joined(name: "alice", session: SessionID(3)), .left(name: "c5", session: SessionID(4)),
        ]
        for (i, kind) in kinds.enumerated() {
            let (text, json) = Self.both(PanelEvent(seq: UInt64(i + 1), kind: kind))
            #expect(text == json, "\(kind)")
            #expect(text.kind.isEvent && text.seq == Int64(i + 1), "\(kind)")
        }
        let (progress, _) = Self.both(PanelEvent(seq: 1, kind: .progress(button: 1, permille: 1000)))
        #expect(progress.permille == 1000 && progress.button == 1)
        let (stopped, _) = Self.both(PanelEvent(seq: 1, kind: .stopped(button: 2, owner: owner, heldMs: 420, discarded: true, reason: .timeout)))
        #expect(stopped.heldMs == 420 && stopped.discarded && stopped.reason == .timeout)
    }

    /// A free button's owner is `-` in text and `null` in JSON: both mean no owner.
    @Test func noOwnerInBothForms() {
        let snapshot = PanelSnapshot(
            buttons: [ButtonSnapshot(button: 1, state: .idle, owner: nil, permille: 0)],
            members: 1, fence: 0, seq: 0)
        let (text, json) = Self.both(.joined(snapshot))
        #expect(text[0].owner == -1)
        #expect(json[0].owner == -1)
        #expect(text == json)
    }

    @Test func repliesAgreeAcrossForms() {
        let snapshot = PanelSnapshot(
            buttons: [ButtonSnapshot(button: 0, state: .pressed, owner: "c1", permille: 0)],
            members: 3, fence: 9, seq: 17)
        let replies: [PanelReply] = [
            .granted(button: 0, fence: 5), .deniedBusy(button: 0, owner: "c2", ownerSession: SessionID(2), active: 0),
            .released(verb: .up, button: 1, ended: nil), .released(verb: .cancel, button: 1, ended: .fired),
            .joined(snapshot), .left,
        ]
        for reply in replies {
            let (text, json) = Self.both(reply)
            #expect(text == json, "\(reply)")
        }
        let (join, _) = Self.both(.joined(snapshot))
        #expect(join.map(\.kind) == [.button, .okJoin])
        #expect(join[0].state == .pressed && join[0].button == 0)
        #expect(join[1].seq == 17 && join[1].fence == 9 && join[1].members == 3)
        let (up, _) = Self.both(.released(verb: .up, button: 1, ended: .fired))
        #expect(up[0].kind == .okUp && up[0].reason == .fired)
        let (denied, _) = Self.both(.deniedBusy(button: 0, owner: "c2", ownerSession: SessionID(2), active: 0))
        #expect(denied[0].kind == .denied && denied[0].reason == .busy && denied[0].owner == 2)
    }

    @Test func serverMessages() {
        var text: [UInt8] = []
        MessageEncoder.encode(.welcome(session: SessionID(31), name: "guest-31"), format: .text, into: &text)
        MessageEncoder.encode(.hello(name: "c4", session: SessionID(31), role: "admin"), format: .json, into: &text)
        MessageEncoder.encode(.error(.badSyntax, "what = this"), format: .text, into: &text)
        MessageEncoder.encode(.pong(token: "t"), format: .json, into: &text)
        let parsed = Self.parse(text)
        #expect(parsed.map(\.kind) == [.welcome, .okHello, .error, .pong])
        #expect(parsed[0].session == 31 && parsed[1].session == 31 && parsed[1].owner == 4)
    }

    @Test func errorCodesInBothForms() {
        var bytes: [UInt8] = []
        MessageEncoder.encode(.error(.rateLimited, "more than 1000 commands a second"), format: .text, into: &bytes)
        MessageEncoder.encode(.error(.rateLimited, "more than 1000 commands a second"), format: .json, into: &bytes)
        MessageEncoder.encode(.error(.staleFence, "fence=3 is not the current grant"), format: .text, into: &bytes)
        MessageEncoder.encode(.error(.notOwner, "b1 is not held by you"), format: .json, into: &bytes)
        MessageEncoder.encode(.error(.unavailable, "no leader for the panel; try again in a second"), format: .text, into: &bytes)
        MessageEncoder.encode(.error(.unavailable, "no leader for the panel; try again in a second"), format: .json, into: &bytes)
        MessageEncoder.encode(.error(.forbidden, "needs the press key"), format: .text, into: &bytes)
        MessageEncoder.encode(.error(.shuttingDown, "the server is shutting down; nothing was done"), format: .text, into: &bytes)
        MessageEncoder.encode(.error(.shuttingDown, "the server is shutting down; nothing was done"), format: .json, into: &bytes)
        #expect(
            Self.parse(bytes).map(\.error) == [
                .rateLimited, .rateLimited, .staleFence, .notOwner, .unavailable, .unavailable, .other, .shuttingDown, .shuttingDown,
            ])
        #expect(Self.parse(bytes).allSatisfy { $0.kind == .error })
    }

    /// A node's goodbye, in both forms: `--hosts` moves the connection to another node on it.
    @Test func goodbyesInBothForms() {
        var bytes: [UInt8] = []
        MessageEncoder.encode(.bye(reason: "shutdown"), format: .text, into: &bytes)
        MessageEncoder.encode(.bye(reason: "shutdown"), format: .json, into: &bytes)
        MessageEncoder.encode(.ok(verb: "QUIT", panel: nil), format: .text, into: &bytes)
        #expect(Self.parse(bytes).map(\.kind) == [.okBye, .okBye, .okQuit])
    }

    @Test func unknownButtonsAndCarriageReturns() {
        let parsed = Self.parse(Array("GRANTED load zz fence=3\r\nOK UP load b1\n".utf8))
        #expect(parsed[0].kind == .granted && parsed[0].button == -1 && parsed[0].fence == 3)
        #expect(parsed[1].kind == .okUp && parsed[1].button == 0)
    }

    @Test func snapshotButtonsReadTheSlowWay() {
        let text = SnapshotButton.parse(Array("BUTTON demo sos kind=hold group=emergency state=locked owner=bob progress=0.250".utf8))
        #expect(text == SnapshotButton(id: "sos", kind: .hold, group: "emergency", state: .locked))
        let json = SnapshotButton.parse(
            Array(#"{"type":"button","panel":"demo","button":"b1","kind":"tap","group":"main","state":"idle","owner":null,"progress":0.000}"#.utf8))
        #expect(json == SnapshotButton(id: "b1", kind: .tap, group: "main", state: .idle))
    }
}
