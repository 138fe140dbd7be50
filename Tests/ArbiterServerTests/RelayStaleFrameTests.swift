import ArbiterCluster
@testable import ArbiterClusterServer
@testable import ArbiterServer
import ArbiterClusterTestSupport
import ArbiterTestSupport
import Dispatch
import Glibc
import Synchronization
import Testing

/// A leader's frames hold only under its lease, like its connections' output
/// (`ClusterStaleOutputTests`): one sent after the lease lapsed is not written, and the
/// link closes, so the node at the other end resynchronises instead of passing on a
/// decision another node may have overtaken.
@Suite struct RelayStaleFrameTests {
    private func event(_ seq: UInt64) -> RelayMessage {
        .event(panel: "demo", term: 7, seq: seq, line: Array("PRESSED demo b1 seq=\(seq)".utf8))
    }

    private func seqs(_ node: RelayTestNode) -> [UInt64] {
        node.received.compactMap { if case .event(_, _, let seq, _) = $0 { seq } else { nil } }
    }

    @Test func aFrameOfALapsedLeaseIsDroppedAndItsLinkCloses() throws {
        let epoch = Atomic<UInt64>(1)
        let a = try RelayTestNode("n1", outputStands: { $0 == epoch.load(ordering: .acquiring) })
        let b = try RelayTestNode("n2")
        a.network.send(event(1), toNode: "n2", address: b.address, leaseEpoch: 1)
        #expect(eventually { seqs(b) == [1] })
        // The lease lapsed (a pause between the decision and this send).
        epoch.store(2, ordering: .releasing)
        a.network.send(event(2), toNode: "n2", address: b.address, leaseEpoch: 1)
        #expect(eventually { a.seen.withLock { $0.downs } == ["n2"] }, "the link stays up with a stale frame dropped")
        #expect(!a.logLines(containing: "decided before this node's lease lapsed").isEmpty)
        // Frames of the current epoch, and unmarked ones, go out again on a new link.
        var seq: UInt64 = 3
        let back = eventually {
            a.network.send(event(seq), toNode: "n2", address: b.address, leaseEpoch: seq % 2 == 0 ? 2 : 0)
            seq += 1
            return eventually(seconds: 0.2) { seqs(b).count > 1 }
        }
        #expect(back)
        #expect(!seqs(b).contains(2), "the stale frame arrived: \(seqs(b))")
    }
}

/// What waited in a link's socket while this node did not read it for longer than the
/// other end waits on a silent link is not passed on: the other end may have closed it
/// and ended this node's sessions meanwhile.
@Suite struct RelayReadGapTests {
    @Test func framesReadAfterALongGapAreNotDeliveredAndTheLinkCloses() throws {
        var patient = RelayOptions()
        patient.silenceTimeoutMs = 30_000
        var reader = RelayOptions()
        reader.pingIntervalMs = 100
        reader.silenceTimeoutMs = 1_000
        let a = try RelayTestNode("n1", options: patient)
        // n2's link thread stalls 1.2 s on the first event, as a paused process would;
        // the second is sent meanwhile and waits in the socket. Real time on purpose: the
        // gap is measured on the monotonic clock against the 1 s silence timeout, and the
        // stall is the thread that would notice anything, so no event can end it.
        let stalled = DispatchSemaphore(value: 0)
        let b = try RelayTestNode("n2", options: reader) { message in
            guard case .event(_, _, 1, _) = message else { return }
            stalled.signal()
            usleep(1_200_000)
        }
        a.network.send(.event(panel: "demo", term: 7, seq: 1, line: []), toNode: "n2", address: b.address)
        #expect(stalled.wait(timeout: .now() + 10) == .success)
        a.network.send(.event(panel: "demo", term: 7, seq: 2, line: []), toNode: "n2", address: b.address)
        #expect(eventually { !b.logLines(containing: "nothing heard for").isEmpty }, "the link was not closed after the gap")
        // Reported down once closed, on the queue that passes its frames on: none comes after.
        #expect(eventually { b.seen.withLock { $0.downs } == ["n1"] }, "the link was never reported down")
        let seqs = b.received.compactMap { m -> UInt64? in if case .event(_, _, let seq, _) = m { seq } else { nil } }
        #expect(seqs == [1], "what waited in the socket was passed on: \(seqs)")
    }
}
