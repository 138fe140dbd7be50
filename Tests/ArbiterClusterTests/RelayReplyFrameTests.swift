import Testing
@testable import ArbiterCluster

/// `RelayFrameEncoder.encodeReply` writes a reply's line in place and fills its lengths in
/// afterwards: it must give the general encoder's bytes exactly, for lines shorter and
/// longer than it reserved for, and decode to the same message.
@Suite struct RelayReplyFrameTests {
    static let cases: [(panel: String, term: Int64, session: UInt64, line: [UInt8], incarnation: UInt64, serial: UInt64)] = [
        ("lobby", 17, 42, Array("RGRANTED lobby b1 fence=1001\n".utf8), 0x0123_4567_89AB_CDEF, .max),
        ("緊急", .max, .max, Array(#"X{"type":"error","code":"unavailable"}"#.utf8), 0, 0),
        ("p", 1, 0, [], 1, 2),
        ("lobby", 3, 3_000_000_001, Array(repeating: 0x7A, count: 5000), .max, 7),
    ]

    @Test(arguments: 0..<cases.count)
    func writesTheGeneralEncodersBytes(index: Int) throws {
        let c = Self.cases[index]
        let general = RelayFrameEncoder.encode(
            .reply(panel: c.panel, term: c.term, session: c.session, line: c.line, incarnation: c.incarnation, serial: c.serial))
        let inPlace = RelayFrameEncoder.encodeReply(
            panel: c.panel, term: c.term, session: c.session, incarnation: c.incarnation, serial: c.serial
        ) { $0.append(contentsOf: c.line) }
        #expect(inPlace == general)
        var decoder = RelayFrameDecoder(limits: .standard)
        decoder.append(inPlace[...])
        let decoded = try decoder.next()
        #expect(decoded == .reply(panel: c.panel, term: c.term, session: c.session, line: c.line, incarnation: c.incarnation, serial: c.serial))
    }
}
