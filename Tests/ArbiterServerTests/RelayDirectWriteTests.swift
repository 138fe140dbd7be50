import ArbiterCluster
@testable import ArbiterClusterServer
@testable import ArbiterServer
import ArbiterClusterTestSupport
import ArbiterTestSupport
import Dispatch
import Testing

/// A frame with nothing queued ahead of it is written by the sending thread itself; once
/// the socket is full, what it does not take goes to the link's queue, and order holds.
@Suite("relay direct writes")
struct RelayDirectWriteTests {
    @Test func aFrameOnAnIdleLinkIsWrittenByItsSender() throws {
        let a = try RelayTestNode("n1")
        let b = try RelayTestNode("n2")
        a.send(.sessionGone(origin: "n1", session: 1), to: b)
        #expect(eventually { b.received.count == 1 && a.network.statistics.framesOut == 1 })
        // Bounded: each frame waits for the previous to arrive, so the link is idle again.
        for i in 2...20 {
            a.send(.sessionGone(origin: "n1", session: UInt64(i)), to: b)
            #expect(eventually { b.received.count == i && a.network.statistics.framesOut == i })
        }
        // The first went out through the dial; the rest found an idle link that is up.
        #expect(a.network.statistics.framesWrittenDirectly == 19)
    }

    @Test func aFullSocketSendsTheRestThroughTheQueueInOrder() throws {
        let release = DispatchSemaphore(value: 0)
        // n2's link queue stops in its first delivery, so its socket fills up.
        let b = try RelayTestNode("n2") { _ in if release.wait(timeout: .now() + 30) == .success { release.signal() } }
        defer { release.signal() }
        let a = try RelayTestNode("n1")
        a.send(.event(panel: "demo", term: 1, seq: 0, line: []), to: b)
        #expect(eventually { a.network.linkCount == 1 && a.network.statistics.framesOut == 1 })
        let line = [UInt8](repeating: 0x41, count: 50_000)
        let count = 200
        // About 10 MB: more than the kernel's buffers both ways, less than the 64 MiB bound.
        for i in 1...count { a.send(.event(panel: "demo", term: 1, seq: UInt64(i), line: line), to: b) }
        let direct = a.network.statistics.framesWrittenDirectly
        #expect(direct >= 1 && direct < count, "the socket filled up: \(direct) written directly")
        release.signal()
        #expect(eventually { b.received.count == count + 1 })
        let seqs = b.received.compactMap { m -> UInt64? in
            if case .event(_, _, let seq, let bytes) = m, seq == 0 || bytes == line { return seq }
            return nil
        }
        #expect(seqs == (0...count).map(UInt64.init))
        #expect(eventually { a.network.statistics.framesOut == count + 1 })
        #expect(a.network.statistics.dropped == 0 && a.network.linkCount == 1)
        b.stop()
    }

    @Test func linksBusyBothWaysWithBacklogsKeepEveryFrameInOrder() throws {
        // Each link's queue reads (and waits in poll for the next frame) while its own
        // writes back up: what it owes must still go out, in order, as the socket drains.
        let a = try RelayTestNode("n1")
        let b = try RelayTestNode("n2")
        a.send(.event(panel: "demo", term: 1, seq: 0, line: []), to: b)
        #expect(eventually { b.received.count == 1 })
        let line = [UInt8](repeating: 0x42, count: 40_000)
        let count = 150
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            for i in 1...count { a.send(.event(panel: "ab", term: 1, seq: UInt64(i), line: line), to: b) }
        }
        DispatchQueue.global().async(group: group) {
            for i in 1...count { b.send(.event(panel: "ba", term: 1, seq: UInt64(i), line: line), to: a) }
        }
        #expect(group.wait(timeout: .now() + 20) == .success)
        #expect(eventually { b.received.count == count + 1 && a.received.count == count })
        func seqs(_ messages: [RelayMessage], _ panel: String) -> [UInt64] {
            messages.compactMap { m in
                if case .event(panel, _, let seq, let bytes) = m, bytes == line { return seq }
                return nil
            }
        }
        #expect(seqs(b.received, "ab") == (1...count).map(UInt64.init))
        #expect(seqs(a.received, "ba") == (1...count).map(UInt64.init))
        #expect(a.network.statistics.dropped == 0 && b.network.statistics.dropped == 0)
    }
}
