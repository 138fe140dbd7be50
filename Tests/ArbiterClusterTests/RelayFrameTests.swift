import ArbiterCore
import Testing
@testable import ArbiterCluster

@Suite struct RelayFrameTests {
    static let messages: [RelayMessage] = [
        .command(
            RelayCommand(
                origin: "n2", session: 42, sessionName: "kiosk-7", key: "s3cret", panel: "lobby",
                command: Array(#"{"cmd":"DOWN","panel":"lobby","button":"sos"}"#.utf8), arrivedAt: 123_456_789,
                incarnation: 0xDEAD_BEEF_0123_4567, serial: 0x0102_0304_0506_0708, lease: 0x7E57_1EA5_E000_0001)),
        .command(RelayCommand(origin: "n3", session: .max, sessionName: "", key: nil, panel: "緊急", command: [], arrivedAt: -5)),
        .reply(panel: "lobby", term: 17, session: 42, line: Array(#"{"type":"ok"}"#.utf8), incarnation: 0x0123_4567_89AB_CDEF, serial: .max),
        .event(panel: "lobby", term: 17, seq: 9_000_000_001, line: Array(#"{"type":"granted","fence":1001}"#.utf8)),
        .sessionGone(origin: "n2", session: 42, incarnation: .max, lease: -7),
        .event(panel: "lobby", term: .max, seq: 12, line: Array(repeating: 0x7A, count: 3000)),
        .ping,
        .stateQuery(panel: "lobby", id: 0x0102_0304_0506_0708),
        .stateAnswer(panel: "緊急", term: 17, id: .max, state: Array(#"{"id":"緊急","members":3,"buttons":[]}"#.utf8)),
        .stateAnswer(panel: "lobby", term: 1, id: 0, state: []),
        .kick(id: 7, session: 3_000_000_001, key: "adm1n", by: .max),
        .kick(id: .max, session: 0, key: nil, by: 1),
        .kickAnswer(id: 7, session: 3_000_000_001, verdict: .forbidden, detail: "緊急"),
        .kickAnswer(id: 8, session: 2, verdict: .kicked, detail: ""),
        .grantEnded(panel: "緊急", term: 17, session: 3_000_000_001, button: "sos", fence: .max, reason: .fired),
        .grantEnded(panel: "lobby", term: .max, session: 0, button: "", fence: 0, reason: .timeout),
        .typedEvent(
            panel: "緊急", term: 17, seq: 0,
            lines: [
                RelayEventLine(
                    fact: .released(button: 3, fence: .max, reason: .failover), text: Array("RELEASED 緊急 sos\n".utf8), json: Array("{}\n".utf8)),
                RelayEventLine(fact: .plain, text: Array("OK JOIN\n".utf8), json: []),
            ]),
        .typedEvent(
            panel: "lobby", term: .max, seq: 9,
            lines: [
                RelayEventLine(fact: .granted(button: 0, owner: "ボブ", session: 3_000_000_001, fence: 1001), text: [0x41], json: [0x7B]),
                RelayEventLine(fact: .left(session: .max), text: [], json: []),
            ]),
        .typedEvent(panel: "lobby", term: 1, seq: 1, lines: []),
    ]

    static var stream: [UInt8] { messages.flatMap(RelayFrameEncoder.encode) }

    func decodeAll(_ chunks: [ArraySlice<UInt8>], limits: RelayLimits = .standard) throws(RelayError) -> [RelayMessage] {
        var decoder = RelayFrameDecoder(limits: limits)
        var out: [RelayMessage] = []
        for chunk in chunks {
            decoder.append(chunk)
            while let m = try decoder.next() { out.append(m) }
        }
        return out
    }

    @Test func everyMessageRoundTrips() throws {
        for message in Self.messages {
            #expect(try decodeAll([RelayFrameEncoder.encode(message)[...]]) == [message])
        }
    }

    @Test func everySplitOfTheStreamDecodesTheSame() throws {
        let stream = Self.stream
        for cut in 0...stream.count {
            #expect(try decodeAll([stream[..<cut], stream[cut...]]) == Self.messages, "cut at \(cut)")
        }
        #expect(try decodeAll(stream.indices.map { stream[$0...$0] }) == Self.messages)
    }

    /// A typed event's line count and facts come from a peer: a count its frame cannot
    /// hold, a fact tag or release reason no version writes, are malformed.
    @Test func aTypedEventOutOfShapeIsMalformed() throws {
        let good = RelayFrameEncoder.encode(
            .typedEvent(panel: "p", term: 1, seq: 2, lines: [RelayEventLine(fact: .left(session: 5), text: [], json: [])]))
        // length (4), type (1), panel (4 + 1), term (8), seq (8): the count, then the fact tag.
        let countAt = 4 + 1 + 5 + 8 + 8
        var tooMany = good
        tooMany[countAt] = 0x7F
        #expect(throws: RelayError.self) { try decodeAll([tooMany[...]]) }
        var badTag = good
        badTag[countAt + 4] = 9
        #expect(throws: RelayError.malformedFrame("event fact 9")) { try decodeAll([badTag[...]]) }
        let reason = RelayFrameEncoder.encode(
            .typedEvent(panel: "p", term: 1, seq: 2, lines: [RelayEventLine(fact: .released(button: 1, fence: 2, reason: .up), text: [], json: [])]))
        let spelled = Array(ReleaseReason.up.rawValue.utf8)
        var badReason = reason
        let at = try #require(badReason.indices.first { badReason[$0...].starts(with: spelled) })
        badReason[at] = UInt8(ascii: "x")
        #expect(throws: RelayError.self) { try decodeAll([badReason[...]]) }
    }

    @Test func anOversizeFrameIsRefusedFromItsLengthAlone() throws {
        let big = RelayFrameEncoder.encode(.event(panel: "p", term: 1, seq: 1, line: Array(repeating: 0, count: 200)))
        #expect(throws: RelayError.frameTooLarge(size: big.count - 4, limit: 100)) {
            try decodeAll([big.prefix(4)], limits: RelayLimits(maxFrameBytes: 100))
        }
        #expect(throws: RelayError.frameTooLarge(size: 0xFFFF_FFFF, limit: RelayLimits.standard.maxFrameBytes)) {
            try decodeAll([[0xFF, 0xFF, 0xFF, 0xFF]])
        }
        let fits = RelayFrameEncoder.encode(.event(panel: "p", term: 1, seq: 1, line: Array(repeating: 0, count: 50)))
        #expect(try decodeAll([fits[...]], limits: RelayLimits(maxFrameBytes: 100)).count == 1)
    }

    @Test func malformedFramesAreRefused() throws {
        func frame(_ body: [UInt8]) -> ArraySlice<UInt8> {
            let n = UInt32(body.count)
            return ([UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + body)[...]
        }
        #expect(throws: RelayError.malformedFrame("empty frame")) { try decodeAll([frame([])]) }
        #expect(throws: RelayError.malformedFrame("unknown frame type 99")) { try decodeAll([frame([99])]) }
        // Never sent, then removed (RelayFrameType): their numbers stay unknown.
        for removed: UInt8 in [5, 6, 7] {
            #expect(throws: RelayError.malformedFrame("unknown frame type \(removed)")) { try decodeAll([frame([removed])]) }
        }
        let gone = Array(RelayFrameEncoder.encode(.sessionGone(origin: "n2", session: 1)).dropFirst(4))
        #expect(throws: RelayError.malformedFrame("bytes left over after the fields")) { try decodeAll([frame(gone + [0])]) }
        #expect(throws: RelayError.malformedFrame("frame ends inside a field")) { try decodeAll([frame(gone.dropLast())]) }
        let badUTF8: [UInt8] = [4, 0, 0, 0, 2, 0xC3, 0x28] + [UInt8](repeating: 0, count: 8)
        #expect(throws: RelayError.malformedFrame("a string is not UTF-8")) { try decodeAll([frame(badUTF8)]) }
        var zeroTerm = Array(RelayFrameEncoder.encode(.event(panel: "p", term: 1, seq: 1, line: [])).dropFirst(4))
        zeroTerm[1 + 4 + 1 + 7] = 0  // the term's last byte: term 0
        #expect(throws: RelayError.malformedFrame("term 0")) { try decodeAll([frame(zeroTerm)]) }
        // A release reason this version does not know is a malformed frame, not a guess.
        var reason = Array(RelayFrameEncoder.encode(.grantEnded(panel: "p", term: 1, session: 1, button: "b", fence: 1, reason: .reset)).dropFirst(4))
        reason.replaceSubrange((reason.count - 5)..., with: Array("zzzzz".utf8))
        #expect(throws: RelayError.malformedFrame("release reason zzzzz")) { try decodeAll([frame(reason)]) }
        // A key's presence byte is 0 or 1: one spelling per frame.
        var presence = Array(RelayFrameEncoder.encode(.kick(id: 1, session: 2, key: nil, by: 3)).dropFirst(4))
        presence[1 + 16] = 2
        #expect(throws: RelayError.malformedFrame("presence byte 2")) { try decodeAll([frame(presence)]) }
        let lying: [UInt8] = [2, 0, 0, 0, 200, 0x70]
        #expect(throws: RelayError.malformedFrame("a field is longer than its frame")) { try decodeAll([frame(lying)]) }
    }
}
