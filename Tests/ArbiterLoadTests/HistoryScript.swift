import ArbiterLoadKit

/// A recorded history written as `stream: wire line`, fed to a `SafetyChecker` through
/// the same parser the generator uses, so doctored histories read like real traffic.
struct HistoryScript {
    static let buttons = [
        SnapshotButton(id: "b1", kind: .tap, group: "g1"),
        SnapshotButton(id: "b2", kind: .tap, group: "g1"),
        SnapshotButton(id: "h1", kind: .hold, group: "g2"),
        SnapshotButton(id: "t1", kind: .talk, group: "g3"),
    ]

    static func snapshot(_ stream: String, seq: Int, fence: Int, members: Int) -> [String] {
        buttons.map { "\(stream): BUTTON load \($0.id) kind=\($0.kind) group=\($0.group) state=idle owner=- progress=0.000" }
            + ["\(stream): OK JOIN load members=\(members) fence=\(fence) seq=\(seq)"]
    }

    /// A clean run: an observer `obs`, a presser `p` that is also a member, and a
    /// presser `q` that is not. Panel order (seq): 1-2 joins, 3-5 tap b1, 6-7 and 9 tap b2
    /// by q, 8-13 a hold that fires, 14-15 a hold let go early, 16-19 a talk.
    static let clean: [String] = {
        var lines = [
            "obs: WELCOME session=s1 name=c0 proto=1",
            "obs: OK HELLO name=c0 session=s1 role=admin",
        ]
        lines += snapshot("obs", seq: 0, fence: 0, members: 1)
        lines += [
            "obs: JOINED load name=c0 session=s1 seq=1",
            "p: WELCOME session=s2 name=c1 proto=1",
            "p: OK HELLO name=c1 session=s2 role=admin",
        ]
        lines += snapshot("p", seq: 1, fence: 0, members: 2)
        lines += [
            "p: JOINED load name=c1 session=s2 seq=2",
            "obs: JOINED load name=c1 session=s2 seq=2",
            "p: GRANTED load b1 fence=1",
            "p: PRESSED load b1 owner=c1 session=s2 fence=1 seq=3",
            "p: FIRED load b1 owner=c1 session=s2 fence=1 seq=4",
            "q: WELCOME session=s3 name=c2 proto=1",
            "q: DENIED load b2 reason=busy owner=c1 active=b1",
            "obs: PRESSED load b1 owner=c1 session=s2 fence=1 seq=3",
            "obs: FIRED load b1 owner=c1 session=s2 fence=1 seq=4",
            "p: OK UP load b1",
            "p: RELEASED load b1 reason=up owner=c1 fence=1 seq=5",
            "obs: RELEASED load b1 reason=up owner=c1 fence=1 seq=5",
            "q: GRANTED load b2 fence=2",
            "obs: PRESSED load b2 owner=c2 session=s3 fence=2 seq=6",
            "obs: FIRED load b2 owner=c2 session=s3 fence=2 seq=7",
            "p: PRESSED load b2 owner=c2 session=s3 fence=2 seq=6",
            "p: FIRED load b2 owner=c2 session=s3 fence=2 seq=7",
            "p: GRANTED load h1 fence=3",
            "p: PRESSED load h1 owner=c1 session=s2 fence=3 seq=8",
            "q: OK UP load b2",
            "p: RELEASED load b2 reason=up owner=c2 fence=2 seq=9",
            "p: MIDWAY load h1 seq=10",
            "p: PROGRESS load h1 value=1.000 seq=11",
            "p: FIRED load h1 owner=c1 session=s2 fence=3 seq=12",
            "p: RELEASED load h1 reason=fired owner=c1 fence=3 seq=13",
            "obs: PRESSED load h1 owner=c1 session=s2 fence=3 seq=8",
            "obs: RELEASED load b2 reason=up owner=c2 fence=2 seq=9",
            "obs: MIDWAY load h1 seq=10",
            "obs: PROGRESS load h1 value=1.000 seq=11",
            "obs: FIRED load h1 owner=c1 session=s2 fence=3 seq=12",
            "obs: RELEASED load h1 reason=fired owner=c1 fence=3 seq=13",
            "p: OK UP load h1 ended=fired",
            "p: GRANTED load h1 fence=4",
            "p: PRESSED load h1 owner=c1 session=s2 fence=4 seq=14",
            "p: OK UP load h1",
            "p: RELEASED load h1 reason=up owner=c1 fence=4 seq=15",
            "p: GRANTED load t1 fence=5",
            "p: PRESSED load t1 owner=c1 session=s2 fence=5 seq=16",
            "p: STARTED load t1 owner=c1 session=s2 fence=5 seq=17",
            "p: OK UP load t1",
            "p: STOPPED load t1 owner=c1 session=s2 fence=5 held_ms=400 discarded=false reason=up seq=18",
            "p: RELEASED load t1 reason=up owner=c1 fence=5 seq=19",
            "obs: PRESSED load h1 owner=c1 session=s2 fence=4 seq=14",
            "obs: RELEASED load h1 reason=up owner=c1 fence=4 seq=15",
            "obs: PRESSED load t1 owner=c1 session=s2 fence=5 seq=16",
            "obs: STARTED load t1 owner=c1 session=s2 fence=5 seq=17",
            "obs: STOPPED load t1 owner=c1 session=s2 fence=5 held_ms=400 discarded=false reason=up seq=18",
            "obs: RELEASED load t1 reason=up owner=c1 fence=5 seq=19",
        ]
        // The end of the run: both members JOIN again and see every button idle.
        lines += ["obs: (JOIN sent)", "p: (JOIN sent)"]
        lines += snapshot("obs", seq: 19, fence: 5, members: 2)
        lines += snapshot("p", seq: 19, fence: 5, members: 2)
        return lines
    }()

    /// Runs `lines` through a fresh checker and returns it, finished.
    static func check(_ lines: [String]) -> SafetyChecker { check(lines, buttons: buttons) }

    /// Runs `lines` (each `stream: wire line`) of panel `load` with `buttons` through a
    /// fresh checker, its buzzer groups told `announce` places; the fair groups' scripts
    /// share it.
    static func check(_ lines: [String], buttons: [SnapshotButton], announce: Int = 10) -> SafetyChecker {
        let table = ButtonTable(panel: "load", buttons: buttons)
        let checker = SafetyChecker(buttons: table)
        checker.announce = announce
        var streams: [String: Int] = [:]
        for line in lines {
            let colon = line.firstIndex(of: ":")!
            let name = String(line[..<colon])
            let stream = streams[name] ?? checker.addStream(name: name)
            streams[name] = stream
            if line.hasSuffix(": (closed)") {
                checker.closeStream(stream)
                continue
            }
            if let range = line.range(of: ": (UP undecided: button "), line.hasSuffix(")") {
                let id = String(line[range.upperBound...].dropLast())
                checker.upUndecided(stream, button: Int32(table.index(of: id) ?? -1))
                continue
            }
            if line.hasSuffix(": (JOIN sent)") {
                checker.joinSent(stream)
                continue
            }
            if line.hasSuffix(": (lost with a DOWN unanswered)") {
                checker.lostUnanswered(stream)
                checker.closeStream(stream)
                continue
            }
            var wire = Array(line[line.index(colon, offsetBy: 2)...].utf8)
            let message = wire.withUnsafeMutableBufferPointer { raw in
                LineMessageParser.parse(UnsafeBufferPointer(raw), 0..<raw.count, buttons: table)
            }
            checker.record(stream, message)
        }
        checker.finish()
        return checker
    }

    /// The rules a history breaks.
    static func broken(_ lines: [String]) -> Set<SafetyRule> {
        Set(check(lines).violations.map(\.rule))
    }
}

extension Array where Element == String {
    /// The history with every occurrence of `old` in a line replaced by `new`.
    func replacing(_ old: String, with new: String) -> [String] {
        map { $0.replacing(old, with: new) }
    }

    /// The history with the line equal to `line` moved to just after the line `after`.
    func moving(_ line: String, after: String) -> [String] {
        var copy = self
        let from = copy.firstIndex(of: line)!
        copy.remove(at: from)
        copy.insert(line, at: copy.firstIndex(of: after)! + 1)
        return copy
    }
}

extension Array where Element == String {
    /// The history with the line `old` (one whole line, the first) replaced by `new`.
    func replacing(_ old: [String], with new: [String]) -> [String] {
        guard let at = firstIndex(of: old[0]) else { return self }
        var copy = self
        copy.replaceSubrange(at..<(at + old.count), with: new)
        return copy
    }
}
