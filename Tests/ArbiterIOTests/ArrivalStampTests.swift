import ArbiterIO
import Dispatch
import Glibc
import Synchronization
import Testing

/// The kernel's receive stamp as a read's arrival: moved from the wall clock onto the
/// monotonic one, believed only between a bound before its read and the read itself.
@Suite struct ArrivalStampTests {
    @Test func aStampIsTheDelayBeforeItsReadOnTheMonotonicClock() {
        // Wall clock = monotonic + 1,000 s; stamped at wall 1,000.000 s + 2 ms, read at 2.5 ms.
        let offset: Int64 = 1_000_000_000_000
        #expect(ArrivalStamp.reading(kernelRealtimeNs: offset + 2_000_000, realtimeOffset: offset, readMonotonicNs: 2_500_000) == .delay(500_000))
        #expect(ArrivalStamp.reading(kernelRealtimeNs: 0, realtimeOffset: offset, readMonotonicNs: 2_500_000) == .none)
    }

    /// A stamp after its read, or more than a second before it, says the wall clock was
    /// set between the offset's sample and the stamp: the read time is used instead.
    @Test func aStampOutsideItsBoundsMeansTheWallClockMoved() {
        let offset: Int64 = 1_000_000_000_000
        let read: Int64 = 5_000_000_000
        // Within the offset's error after the read: at the read.
        #expect(ArrivalStamp.reading(kernelRealtimeNs: offset + read + 5_000, realtimeOffset: offset, readMonotonicNs: read) == .delay(0))
        // Set forward by 10 ms after the offset was sampled.
        #expect(ArrivalStamp.reading(kernelRealtimeNs: offset + read + 10_000_000, realtimeOffset: offset, readMonotonicNs: read) == .clockStepped)
        // Set back by 2 s.
        #expect(ArrivalStamp.reading(kernelRealtimeNs: offset + read - 2_000_000_000, realtimeOffset: offset, readMonotonicNs: read) == .clockStepped)
        #expect(
            ArrivalStamp.reading(kernelRealtimeNs: offset + read - ArrivalStamp.maxDelayNs, realtimeOffset: offset, readMonotonicNs: read)
                == .delay(ArrivalStamp.maxDelayNs))
        #expect(ArrivalStamp.reading(kernelRealtimeNs: offset + read, realtimeOffset: offset, readMonotonicNs: read) == .delay(0))
    }

    /// The offset between the clocks, sampled between two monotonic readings: what the two
    /// clocks read now, to well within a millisecond.
    @Test func theOffsetIsTheWallClockLessTheMonotonicOne() {
        let offset = ArrivalStamp.initialRealtimeOffset()
        var wall = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        let now = Int64(wall.tv_sec) * 1_000_000_000 + Int64(wall.tv_nsec) - SystemClock.monotonic.nanoseconds()
        #expect(abs(now - offset) < 1_000_000)
        #expect(abs(ArrivalStamp.realtimeOffset(previous: offset) - offset) < 1_000_000)
    }

    /// Over TCP loopback: bytes that waited in the socket before the loop read them carry
    /// their arrival, not the read's time.
    @Test func aStampingLoopReadsWhenBytesArrivedNotWhenItGotToThem() throws {
        let loop = try StampingLoop()
        let listener = try Sys.listen(host: "127.0.0.1", port: 0, backlog: 8)
        defer { Sys.close(listener.fd) }
        let (client, accepted) = try #require(try loopbackConnection(to: listener))
        defer { Sys.close(client) }
        let channel = Channel(fd: accepted, generation: 1, loop: loop, outboundLimit: 1 << 20, budget: OutputBudget(limit: 1 << 30), sink: nil)
        loop.queue.sync { loop.register(channel) }
        // The kernel turns its stamping on some time after a first socket asks for it: until
        // a byte comes stamped, read by hand (the loop is not started yet).
        var primed = false
        for _ in 0..<20_000 where !primed {
            #expect(Array("x".utf8).withUnsafeBytes { Sys.write(client, $0) } == .bytes(1))
            var ready = pollfd(fd: accepted, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 10_000) == 1 else { break }
            var stamp: Int64 = 0
            if case .bytes = loop.epoll.receive(accepted, stamp: &stamp) { primed = stamp != 0 }
            // Real time on purpose: the kernel switches stamping on from deferred work
            // (its `netstamp` static key), which a busy machine ran after 1,000 bytes had
            // gone through unstamped; no event tells when. At most 20 s in all.
            if !primed { usleep(1_000) }
        }
        try #require(primed, "no byte came with the kernel's stamp")
        let before = SystemClock.monotonic.nanoseconds()
        #expect(Array("DOWN f red\n".utf8).withUnsafeBytes { Sys.write(client, $0) } == .bytes(11))
        var p = pollfd(fd: accepted, events: Int16(POLLIN), revents: 0)
        #expect(poll(&p, 1, 10_000) == 1)
        // In the socket already: the loop gets to it only now.
        let waited = SystemClock.monotonic.nanoseconds()
        loop.start()
        defer { loop.queue.sync { loop.stop() } }
        #expect(loop.readSignal.wait(timeout: .now() + 10) == .success)
        let read = try #require(loop.reads.withLock { $0.first })
        // The offset between the clocks is sampled, not exact: a few microseconds of slack.
        #expect(read.arrival >= before - 50_000, "arrived \(before - read.arrival) ns before it was written")
        #expect(read.arrival <= waited, "arrived \(read.arrival - waited) ns after it was in the socket")
        #expect(read.readAt >= waited)
        #expect(loop.arrivalCounts.stamped.load(ordering: .relaxed) == 1)
    }
}

/// A loop that stamps arrivals and records each read's arrival and read time.
private final class StampingLoop: EventLoop, @unchecked Sendable {
    struct Read {
        var arrival: Int64
        var readAt: Int64
    }

    let reads = Mutex<[Read]>([])
    let readSignal = DispatchSemaphore(value: 0)

    init() throws {
        try super.init(index: 0, label: "test.stamping", sendBufferBytes: nil, stampsArrivals: true)
    }

    override func received(_ bytes: UnsafeBufferPointer<UInt8>, on channel: Channel, flush: inout FlushList) {
        reads.withLock { $0.append(Read(arrival: arrivalNanos, readAt: batchNanos)) }
        readSignal.signal()
    }
}
