import ArbiterCluster
import ArbiterCore
import ArbiterWire
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// The relay frames' byte fields as this server writes and reads them.
@Suite struct RelayPayloadTests {
    @Test func everyPanelCommandSurvivesTheRelay() throws {
        let requests: [(Request, WireFormat, CommandID?)] = [
            (.join(panel: "demo"), .text, nil),
            (.leave(panel: "demo"), .json, .string("a\"b")),
            (.press(.down(panel: "demo", button: "b1")), .text, .number("7")),
            (.press(.up(panel: "demo", button: "b1", fence: 18_446_744_073_709_551_615)), .json, nil),
            (.press(.cancel(panel: "demo", button: "sos", fence: 3)), .text, nil),
            (.history(panel: "demo", count: 1000), .json, .number("1e3")),
            (.reset(panel: "demo"), .text, nil),
            (.arm(panel: "demo", group: "quiz"), .json, .string("arm")),
        ]
        for (request, format, id) in requests {
            let bytes = RelayPayload.command(request, format: format, id: id, term: 42)
            #expect(RelayPayload.addressedTerm(bytes) == 42)
            let parsed = try RelayPayload.parseCommand(bytes).get()
            #expect(parsed == ParsedCommand(request: request, format: format, id: id), "\(String(decoding: bytes, as: UTF8.self))")
        }
        #expect(throws: RequestError.self) { try RelayPayload.parseCommand(Array("{\"cmd\":\"join\",\"panel\":\"demo\"}".utf8)).get() }
    }

    /// Presses go as text lines (the leader's fast line parser, not its JSON parser),
    /// whatever the session's form and whatever its id holds.
    @Test func pressesTravelAsTextLinesWithTheirIds() throws {
        let ids: [CommandID?] = [nil, .number("-1.5e3"), .string("two words\nand a \"quote\" and \u{2028}"), .string("")]
        for id in ids {
            for format in [WireFormat.text, .json] {
                let request = Request.press(.up(panel: "demo", button: "b1", fence: 7))
                let bytes = RelayPayload.command(request, format: format, id: id, term: 9)
                let newline = try #require(bytes.firstIndex(of: 0x0A))
                #expect(String(decoding: bytes[(newline + 1)...], as: UTF8.self) == "UP demo b1 fence=7")
                #expect(RelayPayload.addressedTerm(bytes) == 9)
                #expect(try RelayPayload.parseCommand(bytes).get() == ParsedCommand(request: request, format: format, id: id))
            }
        }
    }

    /// The relayed press path writes its frame in one pass (`RelayFrameEncoder.
    /// encodePress`): byte for byte the frame the general path writes for the same press,
    /// which the leader reads with the same parser.
    @Test func aPressFrameWrittenInOnePassIsTheGeneralOne() throws {
        let cases: [(Press<String>, String?, WireFormat, Int64, String)] = [
            (.down(panel: "demo", button: "b1"), nil, .text, 0, "alice"),
            (.up(panel: "demo", button: "b1", fence: 18_446_744_073_709_551_615), "k\u{e9}y", .json, 9_223_372_036_854_775_807, "bob-2"),
            (.cancel(panel: "a-panel-with-a-long-name", button: "sos", fence: 0), "", .text, 10, "s"),
            (.up(panel: "p", button: "talk", fence: 99), "key", .json, 7, "x"),
        ]
        for (press, key, format, term, name) in cases {
            let general = RelayFrameEncoder.encode(
                .command(
                    RelayCommand(
                        origin: "node-1", session: 1_234_567_890_123, sessionName: name, key: key, panel: press.panel,
                        command: RelayPayload.command(.press(press), format: format, id: nil, term: term), arrivedAt: -5, incarnation: 77, serial: 12,
                        lease: 694_1234)))
            let onePass = RelayFrameEncoder.encodePress(
                origin: "node-1", session: 1_234_567_890_123, sessionName: name, key: key, panel: press.panel, json: format == .json, term: term,
                verb: press.verb.rawValue, button: press.button, fence: press.fence, arrivedAt: -5, incarnation: 77, serial: 12, lease: 694_1234)
            #expect(onePass == general, "\(press)")
            var decoder = RelayFrameDecoder()
            decoder.append(onePass)
            guard case .command(let command)? = try decoder.next() else {
                Issue.record("not a command frame")
                continue
            }
            #expect(try RelayPayload.parseCommand(command.command).get() == ParsedCommand(request: .press(press), format: format, id: nil))
        }
    }

    /// A bad press still gets its error in the session's form, with its id.
    @Test func aRelayedLineThatIsNoCommandIsRefusedWithItsId() throws {
        let bytes = Array("J5 n42\nDOWN demo".utf8)
        let error = try #require(throws: RequestError.self) { try RelayPayload.parseCommand(bytes).get() }
        #expect(error.format == .json && error.id == .number("42") && error.code == .badSyntax)
        #expect(throws: RequestError.self) { try RelayPayload.parseCommand(Array("T5 x1\nDOWN demo b1".utf8)).get() }
    }

    /// A frame in the earlier form (every command as JSON, the id inside) from a node not
    /// yet upgraded is still understood.
    @Test func theEarlierAllJSONFormIsStillRead() throws {
        let bytes = Array("J12\n{\"cmd\":\"down\",\"panel\":\"demo\",\"button\":\"b1\",\"id\":\"k1\"}".utf8)
        #expect(RelayPayload.addressedTerm(bytes) == 12)
        #expect(
            try RelayPayload.parseCommand(bytes).get() == ParsedCommand(request: .press(.down(panel: "demo", button: "b1")), format: .json, id: .string("k1")))
    }

    @Test func repliesCarryTheirKindAndAJoinItsGrants() throws {
        let grants = [(button: 3, owner: Owner(name: "alice", session: SessionID(5), fence: 9))]
        let line = RelayPayload.reply(.joined, grants: grants, rendered: Array("OK JOIN demo members=2 fence=9 seq=4 term=7\n".utf8))
        let reply = try #require(RelayPayload.parseReply(line))
        #expect(reply.kind == .joined)
        #expect(reply.grants[3]?.owner == "alice" && reply.grants[3]?.fence == 9)
        #expect(String(decoding: reply.rendered, as: UTF8.self) == "OK JOIN demo members=2 fence=9 seq=4 term=7\n")
        let plain = try #require(RelayPayload.parseReply(RelayPayload.reply(.notice, rendered: Array("GRANTED demo b1 fence=3\n".utf8))))
        #expect(plain.kind == .notice && plain.grants.isEmpty)
        #expect(RelayPayload.parseReply(Array("?junk".utf8)) == nil)
    }

    @Test func eventsCarryBothFormsAndTheirOwnership() throws {
        let text = Array("PRESSED demo b1 owner=alice session=s5 fence=9 seq=4\n".utf8)
        let json = Array(#"{"type":"pressed","panel":"demo","button":"b1","owner":"alice","session":"s5","fence":9,"seq":4}"#.utf8) + [0x0A]
        let (t, j) = try #require(RelayPayload.splitEvent(RelayPayload.event(text: text, json: json)))
        #expect(Array(t) == text && Array(j) == json)
        #expect(RelayPayload.ownership(ofTextEvent: t) == .granted(button: "b1", owner: "alice", fence: 9))
        #expect(
            RelayPayload.ownership(ofTextEvent: Array("RELEASED demo b1 reason=up owner=alice fence=9 seq=5\n".utf8)[...])
                == .released(button: "b1", fence: 9, reason: .up))
        #expect(
            RelayPayload.ownership(ofTextEvent: Array("RELEASED demo sos reason=fired owner=alice fence=12 seq=8\n".utf8)[...])
                == .released(button: "sos", fence: 12, reason: .fired))
        #expect(RelayPayload.ownership(ofTextEvent: Array("FIRED demo b1 owner=alice session=s5 fence=9 seq=6\n".utf8)[...]) == nil)
    }

    /// A follower reads a QUEUED answer's button and place in the form the session asked
    /// for, as the encoder writes it, to tell the waiter when the line is gone.
    @Test func aQueuedAnswerNamesItsPlaceInEitherForm() {
        let reply = PanelReply.queued(button: 1, position: 3, owner: "alice")
        let names = PanelNames(Panels.fair)
        for (format, id) in [(WireFormat.text, CommandID?.none), (.json, .string("d\"1")), (.json, nil), (.text, .number("4"))] {
            var out: [UInt8] = []
            MessageEncoder.encode(reply, names: names, format: format, id: id, into: &out)
            let place = RelayPayload.queuedPlace(out[...])
            #expect(place?.button == "b" && place?.position == 3, "\(String(decoding: out, as: UTF8.self))")
        }
        #expect(RelayPayload.queuedPlace(Array("OK UP f a\n".utf8)[...]) == nil)
    }

    /// A follower tells a waiter's resent DOWN's answers apart in either form.
    @Test func grantedAndUnavailableAnswersAreRecognisedInEitherForm() {
        let names = PanelNames(Panels.fair)
        for (format, id) in [(WireFormat.text, CommandID?.none), (.json, .string("x")), (.json, nil), (.text, .number("4"))] {
            var granted: [UInt8] = []
            MessageEncoder.encode(PanelReply.granted(button: 0, fence: 7), names: names, format: format, id: id, into: &granted)
            var unavailable: [UInt8] = []
            MessageEncoder.encode(PanelReply.error(.unavailable, "not now"), names: names, format: format, id: id, into: &unavailable)
            var denied: [UInt8] = []
            MessageEncoder.encode(PanelReply.denied(button: 0, reason: .queueFull), names: names, format: format, id: id, into: &denied)
            #expect(RelayPayload.isGranted(granted[...]) && !RelayPayload.isUnavailable(granted[...]), "\(String(decoding: granted, as: UTF8.self))")
            let named = RelayPayload.grantedButtonAndFence(granted[...])
            #expect(named?.button == "a" && named?.fence == 7, "\(String(decoding: granted, as: UTF8.self))")
            #expect(RelayPayload.grantedButtonAndFence(unavailable[...]) == nil)
            #expect(
                RelayPayload.isUnavailable(unavailable[...]) && !RelayPayload.isGranted(unavailable[...]), "\(String(decoding: unavailable, as: UTF8.self))")
            #expect(!RelayPayload.isGranted(denied[...]) && !RelayPayload.isUnavailable(denied[...]))
        }
    }

    /// A follower passes on the old leader's failover releases only for grants it knew of
    /// (nemesis seed 65), in both forms, with every other line as it was.
    @Test func aFailoverNoticeKeepsOnlyTheReleasesOfKnownGrants() {
        let panel = Panels.fair
        let names = PanelNames(panel)
        for format in [WireFormat.text, .json] {
            var notice: [UInt8] = []
            MessageEncoder.encodeFailoverRelease(panel: panel, button: 0, owner: "alice", fence: 7, format: format, into: &notice)
            MessageEncoder.encodeFailoverRelease(panel: panel, button: 1, owner: "bob", fence: 9, format: format, into: &notice)
            var snapshot: [UInt8] = []
            MessageEncoder.encode(PanelReply.error(.unavailable, "stand-in for the snapshot"), names: names, format: format, id: nil, into: &snapshot)
            notice += snapshot
            var onlySeven: [UInt8] = []
            MessageEncoder.encodeFailoverRelease(panel: panel, button: 0, owner: "alice", fence: 7, format: format, into: &onlySeven)
            onlySeven += snapshot
            #expect(Array(RelayPayload.keepingFailoverReleases(of: [7, 8], in: notice[...])) == onlySeven, "\(format)")
            #expect(Array(RelayPayload.keepingFailoverReleases(of: [7, 9], in: notice[...])) == notice, "\(format)")
            #expect(Array(RelayPayload.keepingFailoverReleases(of: [], in: notice[...])) == snapshot, "\(format)")
        }
    }

    @Test func aGrantedAnswersFenceIsReadFromItsBytesInEitherForm() {
        func fence(_ text: String) -> UInt64? { RelayPayload.grantedFence(Array(text.utf8)[...]) }
        #expect(fence("GRANTED demo b1 fence=1042\n") == 1042)
        #expect(fence(#"{"type":"granted","panel":"demo","button":"b1","fence":7,"id":"c7"}"# + "\n") == 7)
        #expect(fence("DENIED demo b1 reason=busy owner=alice active=b2\n") == nil)
        #expect(fence("GRANTED demo b1\n") == nil)
        #expect(fence("GRANTED demo b1 fence=99999999999999999999999\n") == nil)
        #expect(fence(#"{"type":"error","code":"unavailable","message":"fence=3"}"#) == nil)
        #expect(fence("GRANTED demo b1 fence=") == nil)
        // A slice that does not start at 0, as a frame's payload is.
        let framed = Array("xx GRANTED demo b1 fence=31\n".utf8)
        #expect(RelayPayload.grantedFence(framed[3...]) == 31)
    }
}
