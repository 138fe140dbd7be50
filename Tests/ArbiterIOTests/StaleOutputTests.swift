import ArbiterIO
import Testing

/// Output made under a lease epoch (a cluster node's decisions) is written only while the
/// loop says that epoch still stands (`EventLoop.outputStands`), checked at the write: a
/// process paused between deciding and writing must not hand out a stale GRANTED.
@Suite struct StaleOutputTests {
    /// A loop whose current epoch is 1, and an embedded channel in its table.
    private func embedded() throws -> (RecordingLoop, Channel, EmbeddedSink) {
        let loop = try RecordingLoop()
        let sink = EmbeddedSink()
        let channel = loop.channel(fd: -1, sink: sink)
        loop.queue.sync { loop.register(channel) }
        return (loop, channel, sink)
    }

    @Test func outputOfTheCurrentEpochIsWrittenAndTheMarkClears() throws {
        let (loop, channel, sink) = try embedded()
        var flush = FlushList()
        _ = loop.append(Array("GRANTED demo b1 fence=7\n".utf8), to: channel, last: false, epoch: 1, flush: &flush)
        #expect(channel.withLock { channel.outputEpoch } == 1)
        flush.flushAll()
        #expect(sink.take() == Array("GRANTED demo b1 fence=7\n".utf8))
        #expect(channel.withLock { channel.outputEpoch } == 0)
        #expect(channel.withLock { channel.gate } == .open)
    }

    @Test func outputWhoseEpochEndedBeforeTheWriteIsDroppedAndTheChannelCloses() throws {
        let (loop, channel, sink) = try embedded()
        var flush = FlushList()
        _ = loop.append(Array("GRANTED demo b1 fence=7\n".utf8), to: channel, last: false, epoch: 1, flush: &flush)
        // What a pause between the decision and the write looks like from here: the
        // node's lease lapsed meanwhile.
        loop.currentEpoch.store(2, ordering: .releasing)
        // Output made after the lapse (a failover release) does not make the older
        // output current: the oldest unsent output's epoch is the one checked.
        _ = loop.append(Array("RELEASED demo b1 reason=failover\n".utf8), to: channel, last: false, epoch: 2, flush: &flush)
        flush.flushAll()
        #expect(sink.take().isEmpty)
        // Discarding until the loop's queue closes it (which may already have happened).
        #expect(channel.withLock { channel.gate } != .open)
        #expect(channel.withLock { channel.pending } == 0)
        loop.queue.sync { loop.closeRequested() }
        #expect(!loop.queue.sync { loop.holds(channel) })
        let closes = loop.record.withLock { $0.calls.filter { $0.hasPrefix("closed:") } }
        #expect(closes.count == 1)
        #expect(closes.first?.contains("epoch that ended") == true)
    }

    @Test func unmarkedOutputIsNeverAskedAbout() throws {
        let (loop, channel, sink) = try embedded()
        loop.currentEpoch.store(9, ordering: .releasing)
        var flush = FlushList()
        _ = loop.append(Array("PONG\n".utf8), to: channel, last: false, flush: &flush)
        flush.flushAll()
        #expect(sink.take() == Array("PONG\n".utf8))
    }
}
