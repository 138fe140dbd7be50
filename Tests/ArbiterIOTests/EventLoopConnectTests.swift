import ArbiterIO
import Dispatch
import Glibc
import Testing

/// Sockets the loop dials (`EventLoop.registerConnecting`): output appended while the
/// connect is under way leaves once it is done, and a connect that fails closes the
/// channel with its reason; and the `wrote` hook after EPOLLOUT.
@Suite struct EventLoopConnectTests {
    @Test func outputAppendedWhileConnectingLeavesOnceConnected() throws {
        let listener = try Sys.listen(host: "127.0.0.1", port: 0, backlog: 4)
        defer { Sys.close(listener.fd) }
        let loop = try RecordingLoop()
        let fd = try Sys.connect(host: "127.0.0.1", port: listener.port).get()
        let channel = loop.channel(fd: fd)
        loop.queue.sync {
            loop.registerConnecting(channel)
            // Not written yet, whatever the connect's state: it waits for the loop.
            var flush = FlushList()
            _ = loop.append(Array("hello\n".utf8), to: channel, last: false, flush: &flush)
            flush.flushAll()
        }
        loop.start()
        defer { loop.queue.sync { loop.stop() } }

        let peer = try #require(accept(listener.fd))
        defer { Sys.close(peer) }
        #expect(read(peer, count: 6) == Array("hello\n".utf8))
        // Reads work as on any channel once connected.
        #expect(write(peer, "abc"))
        #expect(read(peer, count: 3) == Array("ABC".utf8))
        let calls = loop.record.withLock { $0.calls }
        #expect(calls.first == "connected", "\(calls)")
        loop.queue.sync { #expect(!channel.connecting && channel.withLock { channel.pending == 0 && !channel.output.waitingWritable }) }
    }

    @Test func aConnectThatFailsClosesTheChannelWithItsReason() throws {
        // A port nobody listens on: bind one, note it, close it.
        let listener = try Sys.listen(host: "127.0.0.1", port: 0, backlog: 1)
        Sys.close(listener.fd)
        let loop = try RecordingLoop()
        let fd = try Sys.connect(host: "127.0.0.1", port: listener.port).get()
        let channel = loop.channel(fd: fd)
        loop.queue.sync { loop.registerConnecting(channel) }
        loop.start()
        defer { loop.queue.sync { loop.stop() } }

        #expect(loop.closedSignal.wait(timeout: .now() + 10) == .success)
        let calls = loop.record.withLock { $0.calls }
        #expect(calls.contains("closed:connect: Connection refused"), "\(calls)")
        #expect(!calls.contains("connected"))
        #expect(loop.queue.sync { loop.channelCount } == 0)
    }

    @Test func writesOnEpollOutAreReportedToTheSubclass() throws {
        let loop = try RecordingLoop(outboundLimit: 8 << 20)
        var fds: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds) == 0)
        defer { Sys.close(fds[1]) }
        let big = [UInt8](repeating: 0x41, count: 4 << 20)
        loop.reply = { _ in big }
        let channel = loop.channel(fd: fds[0])
        loop.queue.sync { loop.register(channel) }
        loop.start()
        defer { loop.queue.sync { loop.stop() } }

        #expect(write(fds[1], "x"))
        #expect(read(fds[1], count: big.count).count == big.count)
        // More than the socket takes at once: the rest went out on EPOLLOUT.
        #expect(loop.record.withLock { $0.calls }.contains("wrote"))
    }

    private func accept(_ listener: Int32) -> Int32? {
        for _ in 0..<1000 {
            guard waitFor(listener, POLLIN) else { return nil }
            if case .accepted(let fd, _) = Sys.accept(listener) { return fd }
        }
        return nil
    }

    private func write(_ fd: Int32, _ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return waitFor(fd, POLLOUT) && bytes.withUnsafeBytes { Sys.write(fd, $0) } == .bytes(bytes.count)
    }

    /// Up to `count` bytes, waiting at most 10 s for each part.
    private func read(_ fd: Int32, count: Int) -> [UInt8] {
        var received: [UInt8] = []
        var scratch = [UInt8](repeating: 0, count: 1 << 16)
        for _ in 0..<100_000 where received.count < count {
            guard waitFor(fd, POLLIN) else { break }
            switch scratch.withUnsafeMutableBytes({ Sys.read(fd, into: $0) }) {
            case .bytes(let n): received += scratch[..<n]
            case .wouldBlock: continue
            case .eof, .failed: return received
            }
        }
        return received
    }

    private func waitFor(_ fd: Int32, _ events: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(events), revents: 0)
        return poll(&p, 1, 10_000) == 1
    }
}
