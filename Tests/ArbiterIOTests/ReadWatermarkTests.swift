import ArbiterIO
import Dispatch
import Glibc
import Synchronization
import Testing

/// Two loops sharing a `ReadWatermark`, on real sockets and the real clock: a loop never
/// says it has read through bytes it has not read yet, and a loop blocked with nothing to
/// read is kicked into saying how far it has, so it holds no decision back.
@Suite struct ReadWatermarkTests {
    /// Neither loop has looked yet (both idle in Dispatch from the start): the ask kicks
    /// them, and the waiter is woken with both through a time after the ask.
    @Test func idleLoopsAreKickedAndReadThroughATimeAfterTheAsk() throws {
        let reads = try ReadWatermark(loops: 2)
        let loops = try (0..<2).map { try MarkingLoop(index: $0, reads: reads) }
        for loop in loops { loop.start() }
        defer { for loop in loops { loop.queue.sync { loop.stop() } } }
        let asked = SystemClock.monotonic.nanoseconds()
        let woke = DispatchSemaphore(value: 0)
        #expect(reads.wake(onceReadThrough: asked) { woke.signal() })
        #expect(woke.wait(timeout: .now() + 10) == .success)
        #expect(reads.readThrough >= asked)
        // Already through: no wake-up to wait for.
        #expect(!reads.wake(onceReadThrough: asked) { Issue.record("woken for a time already read through") })
    }

    /// An arrival counts as behind its loop's mark only past the stamps' error.
    @Test func anArrivalIsBehindTheMarkOnlyPastTheStampError() {
        let error = ReadWatermark.stampErrorNs
        #expect(ReadWatermark.lag(of: 1_000_000, behind: 1_000_000 + error) == nil)
        #expect(ReadWatermark.lag(of: 1_000_000, behind: 1_000_000 + error + 1) == error + 1)
        #expect(ReadWatermark.lag(of: 2_000_000, behind: 1_000_000) == nil)
    }

    /// Bytes written to both loops' sockets in bursts: whenever a loop reads bytes, the
    /// time it has published is not past their arrival (less the stamps' error).
    @Test func noLoopIsThroughBytesItHasNotReadYet() throws {
        let reads = try ReadWatermark(loops: 2)
        let loops = try (0..<2).map { try MarkingLoop(index: $0, reads: reads) }
        let listener = try Sys.listen(host: "127.0.0.1", port: 0, backlog: 8)
        defer { Sys.close(listener.fd) }
        var clients: [Int32] = []
        defer { for fd in clients { Sys.close(fd) } }
        for loop in loops {
            let (client, accepted) = try #require(try loopbackConnection(to: listener))
            clients.append(client)
            let channel = Channel(fd: accepted, generation: 1, loop: loop, outboundLimit: 1 << 20, budget: OutputBudget(limit: 1 << 30), sink: nil)
            loop.queue.sync { loop.register(channel) }
        }
        for loop in loops { loop.start() }
        defer { for loop in loops { loop.queue.sync { loop.stop() } } }
        let line = Array("DOWN f red\n".utf8)
        let rounds = 300
        for round in 0..<rounds {
            for client in clients { #expect(line.withUnsafeBytes { Sys.write(client, $0) } == .bytes(line.count)) }
            // Now and then both idle for a moment, and the next bytes wake them.
            if round % 30 == 0 { _ = reads.wake(onceReadThrough: SystemClock.monotonic.nanoseconds()) {} }
        }
        for loop in loops {
            #expect(loop.allRead.wait(timeout: .now() + 10) == .success)
            let seen = loop.seen.withLock { $0 }
            #expect(seen.bytes == rounds * line.count)
            #expect(seen.aheadOfBytes == 0, "through up to \(seen.mostAheadNs) ns past bytes not read yet")
        }
    }
}

/// A loop that stamps arrivals and checks, at every read, that its own published
/// read-through is not past the bytes being read.
private final class MarkingLoop: EventLoop, @unchecked Sendable {
    struct Seen {
        var bytes = 0
        var aheadOfBytes = 0
        var mostAheadNs: Int64 = 0
    }

    let seen = Mutex(Seen())
    /// Signalled once 300 lines have come.
    let allRead = DispatchSemaphore(value: 0)

    init(index: Int, reads: ReadWatermark) throws {
        try super.init(index: index, label: "test.marking.\(index)", sendBufferBytes: nil, stampsArrivals: true, readWatermark: reads)
    }

    override func received(_ bytes: UnsafeBufferPointer<UInt8>, on channel: Channel, flush: inout FlushList) {
        let through = readWatermark!.marks[index].readThrough
        let ahead = through - (arrivalNanos + ReadWatermark.stampErrorNs)
        let done = seen.withLock { s in
            s.bytes += bytes.count
            if ahead > 0 {
                s.aheadOfBytes += 1
                s.mostAheadNs = max(s.mostAheadNs, ahead)
            }
            return s.bytes == 300 * 11
        }
        if done { allRead.signal() }
    }
}
