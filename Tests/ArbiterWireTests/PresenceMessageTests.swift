import ArbiterCore
import Testing

@testable import ArbiterWire

/// A large panel's presence on the wire: `PRESENCE`, the joiner's own `JOINED` after its
/// snapshot without a seq, and the config field that sets the size.
@Suite struct PresenceMessageTests {
    let panel = PanelConfig.demo

    func encode(_ e: PanelEvent.Kind, seq: UInt64, _ format: WireFormat) -> String {
        var out: [UInt8] = []
        MessageEncoder.encode(PanelEvent(seq: seq, kind: e), panel: panel, format: format, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    func encode(_ r: PanelReply, _ format: WireFormat, id: CommandID? = nil) -> String {
        var out: [UInt8] = []
        MessageEncoder.encode(r, panel: panel, format: format, id: id, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    @Test func presenceInBothForms() {
        let kind = PanelEvent.Kind.presence(members: 2500, joined: 3, left: 41)
        #expect(encode(kind, seq: 57, .text) == "PRESENCE demo members=2500 joined=3 left=41 seq=57\n")
        #expect(
            encode(kind, seq: 57, .json)
                == #"{"type":"presence","panel":"demo","members":2500,"joined":3,"left":41,"seq":57}"# + "\n")
    }

    @Test func theJoinersOwnJoinedFollowsItsSnapshotWithoutSeq() {
        var snapshot = PanelSnapshot(buttons: [], members: 101, fence: 4, seq: 9)
        snapshot.joiner = PanelSnapshot.Joiner(name: "kiosk-7", session: SessionID(7))
        #expect(encode(.joined(snapshot), .text) == "OK JOIN demo members=101 fence=4 seq=9\nJOINED demo name=kiosk-7 session=s7\n")
        // The command's id goes on its reply, not on the event-like line after it.
        #expect(
            encode(.joined(snapshot), .json, id: .string("j1"))
                == #"{"type":"ok","re":"join","panel":"demo","members":101,"fence":4,"seq":9,"id":"j1"}"# + "\n"
                + #"{"type":"joined","panel":"demo","name":"kiosk-7","session":"s7"}"# + "\n")
        snapshot.joiner = nil
        #expect(encode(.joined(snapshot), .text) == "OK JOIN demo members=101 fence=4 seq=9\n")
    }

    func decode(_ field: String) throws(ConfigDecoder.Failure) -> PanelConfig {
        try ConfigDecoder.decode(Array(#"{"panels":[{"id":"p","buttons":[{"id":"a"}]\#(field)}]}"#.utf8))[0]
    }

    func failure(_ field: String) -> String? {
        do { _ = try decode(field); return nil } catch { return error.description }
    }

    @Test func theSizeIsConfigured() throws {
        #expect(try decode("").presenceSummaryAbove == 100)
        #expect(try decode(#","presence_summary_above":0"#).presenceSummaryAbove == 0)
        #expect(try decode(#","presence_summary_above":5000"#).presenceSummaryAbove == 5000)
        #expect(failure(#","presence_summary_above":-1"#) == "panels[0].presence_summary_above: must be between 0 and 1000000, not -1")
        #expect(failure(#","presence_summary_above":"lots""#)?.hasPrefix("panels[0].presence_summary_above: must be a whole number") == true)
    }
}
