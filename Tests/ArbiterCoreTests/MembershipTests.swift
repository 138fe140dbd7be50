import Testing
@testable import ArbiterCore

@Suite("JOIN, LEAVE and seq")
struct MembershipTests {
    @Test func joinSnapshotThenOwnJoined() {
        var h = CoreHarness()
        h.down("b1", 9)
        let lines = h.send(.join, 1, "alice")
        #expect(lines == ["OK JOIN members=1 fence=1 seq=2", "JOINED alice s1 #3"])
    }

    @Test func joinAgainGivesSnapshotOnly() {
        var h = CoreHarness()
        h.send(.join, 1)
        #expect(h.send(.join, 1) == ["OK JOIN members=1 fence=0 seq=1"])
    }

    @Test func snapshotStates() {
        var h = CoreHarness()
        h.down("b2", 1, access: .admin)
        var out = PanelOutput()
        h.core.handle(.join, session: SessionID(2), name: "bob", access: .view, now: h.now, into: &out)
        guard case .reply(.joined(let snap)) = out.items[0] else { Issue.record("no snapshot"); return }
        #expect(snap.buttons.map(\.state) == [.locked, .pressed, .locked, .idle, .idle])
        #expect(snap.buttons.map(\.owner) == ["u1", "u1", "u1", nil, nil])
    }

    @Test func leave() {
        var h = CoreHarness()
        h.send(.join, 1)
        h.send(.join, 2)
        #expect(h.send(.leave, 1) == ["OK LEAVE", "LEFT u1 s1 #3"])
        #expect(h.send(.leave, 1) == ["OK LEAVE"])
        #expect(h.core.memberCount == 1)
    }

    @Test func seqIsGaplessFromOne() {
        var h = CoreHarness()
        h.send(.join, 1)
        h.down("b1", 2)
        h.down("sos", 3)
        h.runTimers(for: 4000)
        h.up("b1", 2)
        let seqs = h.log.compactMap { line -> Int? in
            guard let hash = line.lastIndex(of: "#") else { return nil }
            return Int(line[line.index(after: hash)...])
        }
        #expect(seqs == Array(1...seqs.count))
    }
}
