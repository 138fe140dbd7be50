import ArbiterCore
import Testing
@testable import ArbiterWire

/// Fences are UInt64 end to end: journal records, HISTORY and JSON keep every value up
/// to 2^64-1 exactly, never clamped to Int64.max.
@Suite("fences at and above 2^63")
struct UnsignedFenceTests {
    let panel = PanelConfig.demo

    @Test func unsignedIntegerTakesPlainDigitsUpToUInt64Max() throws {
        func value(_ text: String) throws -> UInt64? { try JSONParser.parse(Array(text.utf8)).unsignedInteger }
        #expect(try value("0") == 0)
        #expect(try value("9223372036854775808") == 9_223_372_036_854_775_808)
        #expect(try value("18446744073709551615") == UInt64.max)
        #expect(try value("18446744073709551616") == nil)
        #expect(try value("-1") == nil)
        #expect(try value("-0") == nil)
        #expect(try value("1.0") == nil)
        #expect(try value("1e30") == nil)
        #expect(try value("\"12\"") == nil)
        // The signed reading stops at Int64.max, as before.
        #expect(try JSONParser.parse(Array("9223372036854775808".utf8)).integer == nil)
    }

    @Test(arguments: [UInt64(9_223_372_036_854_775_807), 9_223_372_036_854_775_808, 9_223_372_036_854_775_809, UInt64.max])
    func aRecordKeepsItsFenceExactly(fence: UInt64) throws {
        let owner = Owner(name: "alice", session: SessionID(3), fence: fence)
        let event = PanelEvent(seq: fence, kind: .pressed(button: 0, owner: owner))
        let record = try #require(HistoryRecord(event: event, panel: panel, at: 5))
        #expect(record.fence == fence)
        #expect(MessageEncoder.text(.record(record)) == "RECORD demo b1 event=pressed at=5 owner=alice session=s3 fence=\(fence) seq=\(fence)\n")
        let json = MessageEncoder.text(.record(record), format: .json)
        #expect(json.contains(#""fence":\#(fence),"seq":\#(fence)}"#))
        let parsed = try JSONParser.parse(Array(json.utf8.dropLast()))
        let back = try #require(HistoryRecord(json: parsed))
        #expect(back == record)
        #expect(back.fence == fence)
    }

    @Test func aFenceAboveUInt64MaxOrNegativeIsNoFence() throws {
        let line = #"{"type":"record","panel":"demo","button":"b1","event":"pressed","at":1,"fence":18446744073709551616}"#
        #expect(HistoryRecord(json: try JSONParser.parse(Array(line.utf8))) == nil)
        let negative = #"{"type":"record","panel":"demo","button":"b1","event":"pressed","at":1,"fence":-3}"#
        #expect(try #require(HistoryRecord(json: try JSONParser.parse(Array(negative.utf8)))).fence == nil)
    }
}
