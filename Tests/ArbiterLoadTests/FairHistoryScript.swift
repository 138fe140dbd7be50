import ArbiterLoadKit

/// Recorded histories of a queue group `q` (buttons a, b) and a buzzer group `quiz`
/// (red, blue), watched by one observer, in the style of `HistoryScript`.
struct FairHistoryScript {
    static let buttons = [
        SnapshotButton(id: "a", kind: .tap, group: "q", policy: .queue),
        SnapshotButton(id: "b", kind: .tap, group: "q", policy: .queue),
        SnapshotButton(id: "red", kind: .tap, group: "quiz", policy: .buzzer),
        SnapshotButton(id: "blue", kind: .tap, group: "quiz", policy: .buzzer),
    ]

    static func snapshot(seq: Int, fence: Int) -> [String] {
        buttons.map { "obs: BUTTON load \($0.id) kind=tap group=\($0.group) policy=\($0.policy) state=idle owner=- progress=0.000" }
            + ["obs: OK JOIN load members=1 fence=\(fence) seq=\(seq)"]
    }

    /// s2 owns q; s3 then s4 queue; s2 lets go and s3 gets it; s4 cancels; s3 lets go.
    static let queue: [String] = {
        var lines = ["obs: WELCOME session=s1 name=c0 proto=1"]
        lines += snapshot(seq: 0, fence: 0)
        lines += [
            "p2: GRANTED load a fence=1",
            "obs: PRESSED load a owner=c2 session=s2 fence=1 seq=1",
            "obs: FIRED load a owner=c2 session=s2 fence=1 seq=2",
            "p3: QUEUED load b position=1 owner=c2",
            "obs: QUEUED load b name=c3 session=s3 position=1 seq=3",
            "p4: QUEUED load a position=2 owner=c2",
            "obs: QUEUED load a name=c4 session=s4 position=2 seq=4",
            "p2: OK UP load a",
            "obs: RELEASED load a reason=up owner=c2 fence=1 seq=5",
            "p3: GRANTED load b fence=2",
            "obs: PRESSED load b owner=c3 session=s3 fence=2 seq=6",
            "obs: FIRED load b owner=c3 session=s3 fence=2 seq=7",
            "p4: OK CANCEL load a",
            "obs: DEQUEUED load a name=c4 session=s4 position=1 reason=cancel seq=8",
            "p3: OK UP load b",
            "obs: RELEASED load b reason=up owner=c3 fence=2 seq=9",
        ]
        return lines + snapshot(seq: 9, fence: 2)
    }()

    /// Two rounds: s2 wins the first, s3 and s4 are ranked; a RESET closes it and an
    /// early DOWN is denied; s4 wins the second.
    static let buzz: [String] = {
        var lines = ["obs: WELCOME session=s1 name=c0 proto=1"]
        lines += snapshot(seq: 0, fence: 0)
        lines += [
            "obs: ARMED load quiz seq=1",
            "p2: GRANTED load red fence=1",
            "obs: PRESSED load red owner=c2 session=s2 fence=1 seq=2",
            "obs: FIRED load red owner=c2 session=s2 fence=1 seq=3",
            "p3: RANKED load blue rank=2 after_us=120",
            "obs: BUZZED load blue name=c3 session=s3 rank=2 after_us=120 seq=4",
            "p4: RANKED load red rank=3 after_us=120",
            "obs: BUZZED load red name=c4 session=s4 rank=3 after_us=120 seq=5",
            "p2: OK UP load red",
            "obs: RELEASED load red reason=up owner=c2 fence=1 seq=6",
            "obs: CLOSED load quiz seq=7",
            "p3: DENIED load blue reason=early",
            "obs: ARMED load quiz seq=8",
            "p4: GRANTED load blue fence=2",
            "obs: PRESSED load blue owner=c4 session=s4 fence=2 seq=9",
            "obs: FIRED load blue owner=c4 session=s4 fence=2 seq=10",
            "p3: RANKED load red rank=2 after_us=3000",
            "obs: BUZZED load red name=c3 session=s3 rank=2 after_us=3000 seq=11",
            "p4: OK UP load blue",
            "obs: RELEASED load blue reason=up owner=c4 fence=2 seq=12",
        ]
        return lines + snapshot(seq: 12, fence: 2)
    }()

    /// The observer joins in the middle of a round: s2 has won, s3 is ranked; s4 is
    /// ranked after the snapshot; a RESET closes the round.
    static let buzzJoinedMidRound: [String] = [
        "obs: WELCOME session=s1 name=c0 proto=1",
        "obs: BUTTON load a kind=tap group=q policy=queue state=idle owner=- progress=0.000",
        "obs: BUTTON load b kind=tap group=q policy=queue state=idle owner=- progress=0.000",
        "obs: BUTTON load red kind=tap group=quiz policy=buzzer state=pressed owner=c2 progress=0.000 owner_session=s2",
        "obs: BUTTON load blue kind=tap group=quiz policy=buzzer state=idle owner=- progress=0.000",
        "obs: ROUND load quiz state=won",
        "obs: RANK load red name=c2 session=s2 rank=1 after_us=0",
        "obs: RANK load blue name=c3 session=s3 rank=2 after_us=120",
        "obs: OK JOIN load members=4 fence=1 seq=4",
        "p4: RANKED load red rank=3 after_us=150",
        "obs: BUZZED load red name=c4 session=s4 rank=3 after_us=150 seq=5",
        "obs: RELEASED load red reason=reset owner=c2 fence=1 seq=6",
        "obs: CLOSED load quiz seq=7",
    ]

    static func check(_ lines: [String]) -> SafetyChecker { HistoryScript.check(lines, buttons: buttons) }

    static func broken(_ lines: [String]) -> Set<SafetyRule> {
        Set(check(lines).violations.map(\.rule))
    }
}
