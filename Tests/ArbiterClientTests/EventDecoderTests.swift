import Foundation
import Testing

@testable import ArbiterClient

/// The decoder is total: seeded random lines never crash it, a type it does not know is
/// `.unknown` with the line, and every event it knows survives a round trip.
@Suite("client: event decoder")
struct EventDecoderTests {
    /// SplitMix64: a seed in the failure message reproduces the run.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
        mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
    }

    static let knownTypes = [
        "pressed", "fired", "progress", "midway", "tapped", "started", "stopped", "cancelled", "released", "joined", "left", "presence",
        "queued", "dequeued", "armed", "closed", "buzzed", "granted",
    ]
    static let keys = [
        "type", "panel", "button", "owner", "session", "fence", "seq", "value", "reason", "name", "held_ms", "discarded", "members", "joined",
        "left", "position", "group", "rank", "after_us", "id",
    ]

    func randomValue(_ r: inout Random) -> String {
        switch r.below(9) {
        case 0: return "\(r.next())"
        case 1: return "-\(r.below(1000))"
        case 2: return "\(Double(r.below(100_000)) / 1000)"
        case 3: return r.pick(["true", "false", "null"])
        case 4: return "[\(r.below(5)),{}]"
        case 5: return "{\"a\":[1,2,{\"b\":null}]}"
        case 6: return "18446744073709551616"
        default: return Command.quote(randomText(&r))
        }
    }

    func randomText(_ r: inout Random) -> String {
        let alphabet = Array("ab01-_ \"\\{}[]:,=\u{0}\u{7}\u{85}\u{2028}緊急é😀")
        return String((0..<r.below(12)).map { _ in r.pick(alphabet) })
    }

    func randomLine(_ r: inout Random) -> String {
        switch r.below(4) {
        case 0:
            return randomText(&r)
        case 1:
            // Bytes that are not all UTF-8, as the reader would have decoded them.
            return String(decoding: (0..<r.below(40)).map { _ in UInt8(truncatingIfNeeded: r.next()) }, as: UTF8.self)
        default:
            var fields: [String] = []
            if r.below(5) > 0 { fields.append("\"type\":" + (r.below(3) == 0 ? randomValue(&r) : Command.quote(r.pick(Self.knownTypes)))) }
            for _ in 0..<r.below(10) { fields.append(Command.quote(r.pick(Self.keys)) + ":" + randomValue(&r)) }
            let object = "{" + fields.joined(separator: ",") + "}"
            // Sometimes cut short, as a torn line would be.
            return r.below(6) == 0 ? String(object.prefix(r.below(object.count + 1))) : object
        }
    }

    @Test(arguments: [UInt64(1), 2, 3, 0xDEAD_BEEF])
    func randomLinesNeverCrashAndStayTheirLine(seed: UInt64) {
        var r = Random(state: seed)
        var tracker = PanelTracker(panel: "demo")
        for _ in 0..<5_000 {
            let line = randomLine(&r)
            let event = EventDecoder.decode(line: line)
            if case .unknown(let text) = event { #expect(text == line, "seed \(seed)") }
            if let message = ServerMessage(line: line) { _ = tracker.receive(message, me: "s1") }
        }
    }

    @Test func aTypeItDoesNotKnowIsUnknownWithTheLine() {
        var r = Random(state: 7)
        for _ in 0..<1_000 {
            let type = "x" + randomText(&r).filter { $0.isLetter }
            let line = #"{"type":\#(Command.quote(type)),"panel":"demo","button":"b1","seq":3}"#
            #expect(EventDecoder.decode(line: line) == .unknown(line))
        }
        // A known type without a field it needs is no guess either.
        let torn = #"{"type":"pressed","panel":"demo","button":"b1","owner":"a","fence":1,"seq":2}"#
        #expect(EventDecoder.decode(line: torn) == .unknown(torn))
    }

    @Test func everyKnownEventRoundTrips() {
        let max = UInt64.max
        let cases: [(String, PanelEvent)] = [
            (
                #"{"type":"pressed","panel":"p","button":"b","owner":"a","session":"s1","fence":18446744073709551615,"seq":1}"#,
                .pressed(button: "b", owner: "a", session: "s1", fence: max, seq: 1)
            ),
            (#"{"type":"progress","panel":"p","button":"sos","value":1.000,"seq":4}"#, .progress(button: "sos", value: 1, seq: 4)),
            (
                #"{"type":"stopped","panel":"p","button":"t","owner":"a","session":"s1","fence":3,"held_ms":852,"discarded":false,"reason":"up","seq":9}"#,
                .stopped(button: "t", owner: "a", session: "s1", fence: 3, heldMilliseconds: 852, discarded: false, reason: "up", seq: 9)
            ),
            (
                #"{"type":"released","panel":"p","button":"b","reason":"failover","owner":"a","fence":7}"#,
                .released(button: "b", reason: "failover", owner: "a", fence: 7, seq: nil)
            ),
            (#"{"type":"joined","panel":"p","name":"a","session":"s1"}"#, .joined(name: "a", session: "s1", seq: nil)),
            (#"{"type":"presence","panel":"p","members":101,"joined":3,"left":1,"seq":5}"#, .presence(members: 101, joined: 3, left: 1, seq: 5)),
            (
                #"{"type":"dequeued","panel":"p","button":"b","name":"a","session":"s1","position":2,"reason":"leave","seq":6}"#,
                .dequeued(button: "b", name: "a", session: "s1", position: 2, reason: "leave", seq: 6)
            ),
            (
                #"{"type":"buzzed","panel":"p","button":"b","name":"a","session":"s1","rank":2,"after_us":1500,"seq":8}"#,
                .buzzed(button: "b", name: "a", session: "s1", rank: 2, afterMicroseconds: 1500, seq: 8)
            ),
            (#"{"type":"armed","panel":"p","group":"quiz","seq":2}"#, .armed(group: "quiz", seq: 2)),
            (#"{"type":"granted","panel":"p","button":"b","fence":12}"#, .handedOff(button: "b", fence: 12)),
        ]
        for (line, event) in cases { #expect(EventDecoder.decode(line: line) == event, "\(line)") }
    }

    func message(_ line: String) -> ServerMessage { ServerMessage(line: line)! }

    func snapshot(_ tracker: inout PanelTracker, seq: UInt64, owner: String? = nil, cause: ResyncCause?) -> [PanelEvent] {
        let owned = owner.map { #""owner":"a","owner_session":"\#($0)","state":"pressed""# } ?? #""owner":null,"owner_session":null,"state":"idle""#
        let button = message(#"{"type":"button","panel":"demo","button":"b1","kind":"tap","group":"main",\#(owned),"progress":0}"#)
        let ok = message(#"{"type":"ok","re":"join","panel":"demo","members":1,"fence":4,"seq":\#(seq)}"#)
        return tracker.applySnapshot(lines: [button], ok: ok, cause: cause, me: "s1").events
    }

    /// A gap in the seq chain stops the events until a fresh snapshot: nothing after the
    /// gap is passed on as if nothing had been missed.
    @Test func aSeqGapStopsTheEventsUntilTheNextSnapshot() {
        var tracker = PanelTracker(panel: "demo")
        #expect(snapshot(&tracker, seq: 5, cause: nil).isEmpty)
        let left = { (seq: Int) in self.message(#"{"type":"left","panel":"demo","name":"x","session":"s9","seq":\#(seq)}"#) }
        #expect(tracker.receive(left(6), me: "s1") == [.event(.left(name: "x", session: "s9", seq: 6))])
        #expect(tracker.receive(left(6), me: "s1").isEmpty, "a repeated seq is dropped")
        #expect(tracker.receive(left(8), me: "s1") == [.resyncNeeded(expected: 7, received: 8)])
        #expect(tracker.receive(left(9), me: "s1").isEmpty)
        let events = snapshot(&tracker, seq: 9, cause: .gap(expected: 7, received: 8))
        guard case .resynced(let state, .gap(7, 8))? = events.first else {
            Issue.record("\(events)")
            return
        }
        #expect(state.seq == 9)
        #expect(tracker.receive(left(10), me: "s1") == [.event(.left(name: "x", session: "s9", seq: 10))])
    }

    /// A grant the snapshot no longer shows ended unseen; one it still shows stands.
    @Test func aResyncTellsWhichOwnGrantsEnded() {
        var tracker = PanelTracker(panel: "demo")
        _ = snapshot(&tracker, seq: 1, cause: nil)
        tracker.granted("b1", fence: 4, session: "s1")
        _ = snapshot(&tracker, seq: 3, owner: "s1", cause: .gap(expected: 2, received: 3))
        #expect(tracker.grants["b1"]?.fence == 4)
        let ended = tracker.applySnapshot(
            lines: [], ok: message(#"{"type":"ok","re":"join","panel":"demo","members":1,"fence":4,"seq":5}"#), cause: .gap(expected: 4, received: 5),
            me: "s1"
        ).ended
        #expect(ended == [PanelTracker.Ended(button: "b1", fence: 4)])
        let record = message(#"{"type":"record","panel":"demo","button":"b1","event":"released","at":1,"reason":"timeout","owner":"a","fence":4,"seq":4}"#)
        #expect(tracker.resolve(ended, records: [record]) == [.endedWhileAway(button: "b1", fence: 4, reason: "timeout")])
        #expect(tracker.localRelease("b1", session: "s1") == .alreadyEnded(reason: "timeout"))
        #expect(tracker.localRelease("b1", session: "s1") == nil, "told once")
    }

    /// The link died before the HISTORY about an unseen end was answered: the next
    /// snapshot reports the end again, so the app still hears of it once.
    @Test func anEndWhoseHistoryWentUnansweredComesWithTheNextSnapshot() {
        var tracker = PanelTracker(panel: "demo")
        _ = snapshot(&tracker, seq: 1, cause: nil)
        tracker.granted("b1", fence: 4, session: "s1")
        let ok = { (seq: Int) in self.message(#"{"type":"ok","re":"join","panel":"demo","members":1,"fence":4,"seq":\#(seq)}"#) }
        let first = tracker.applySnapshot(lines: [], ok: ok(5), cause: .reconnected(host: "h"), me: "s2").ended
        #expect(first == [PanelTracker.Ended(button: "b1", fence: 4)])
        tracker.unanswered(first)
        let again = tracker.applySnapshot(lines: [], ok: ok(7), cause: .reconnected(host: "h"), me: "s3").ended
        #expect(again == first)
        #expect(tracker.applySnapshot(lines: [], ok: ok(8), cause: .reconnected(host: "h"), me: "s3").ended.isEmpty, "told once")
    }
}
