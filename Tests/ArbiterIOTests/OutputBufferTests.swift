import ArbiterIO
import CSystem
import Glibc
import Testing

/// The socket half of a connection's output, against a real socket pair and epoll.
@Suite struct OutputBufferTests {
    @Test func smallOutputDrainsAtOnceAndKeepsItsSmallBuffer() throws {
        let pair = try socketPair()
        defer { Sys.close(pair.0); Sys.close(pair.1) }
        var output = OutputBuffer()
        output.bytes = Array("OK GRANTED 1\n".utf8)
        #expect(output.write(fd: pair.0, epfd: -1, data: 0) == .drained)
        #expect(output.pending == 0 && output.start == 0 && !output.waitingWritable)
        #expect(output.bytes.capacity > 0)
        var scratch = [UInt8](repeating: 0, count: 64)
        #expect(scratch.withUnsafeMutableBytes { Sys.read(pair.1, into: $0) } == .bytes(13))
    }

    @Test func aFullSocketAsksForEpollOutAndTheRestLeavesOnceItIsReadable() throws {
        let pair = try socketPair()
        defer { Sys.close(pair.0); Sys.close(pair.1) }
        let epfd = try Sys.epollCreate()
        defer { Sys.close(epfd) }
        #expect(cs_epoll_ctl(epfd, cs_EPOLL_CTL_ADD, pair.0, cs_EPOLLIN | cs_EPOLLRDHUP, 42) == 0)
        var output = OutputBuffer()
        let sent = [UInt8](repeating: 0x41, count: 4 << 20)
        output.bytes = sent
        #expect(output.write(fd: pair.0, epfd: epfd, data: 42) == .blocked)
        #expect(output.waitingWritable)
        #expect(output.pending > 0 && output.pending < sent.count)

        // Reading on the other side frees room: epoll reports EPOLLOUT with our data.
        var received: [UInt8] = []
        var scratch = [UInt8](repeating: 0, count: 1 << 16)
        var events: UInt32 = 0
        var data: UInt64 = 0
        for _ in 0..<10_000 where output.pending > 0 {
            if case .bytes(let n) = scratch.withUnsafeMutableBytes({ Sys.read(pair.1, into: $0) }) {
                received += scratch[..<n]
            }
            guard cs_epoll_wait(epfd, &events, &data, 1, 0) == 1, events & cs_EPOLLOUT != 0 else { continue }
            #expect(data == 42)
            output.waitingWritable = false
            if output.write(fd: pair.0, epfd: epfd, data: 42) == .drained {
                output.updateInterest(fd: pair.0, epfd: epfd, data: 42)
            }
        }
        #expect(output.pending == 0 && !output.waitingWritable)
        // A big buffer is given back once written.
        #expect(output.bytes.capacity == 0)
        for _ in 0..<10_000 where received.count < sent.count {
            if case .bytes(let n) = scratch.withUnsafeMutableBytes({ Sys.read(pair.1, into: $0) }) {
                received += scratch[..<n]
            }
        }
        #expect(received == sent)
        // Interest is back to reading only: no EPOLLOUT spin once drained.
        #expect(cs_epoll_wait(epfd, &events, &data, 1, 0) == 0)
    }

    @Test func aVanishedPeerFailsTheWriteAndDiscardDropsTheRest() throws {
        let pair = try socketPair()
        defer { Sys.close(pair.0) }
        Sys.close(pair.1)
        var output = OutputBuffer()
        output.bytes = Array("OK BYE\n".utf8)
        #expect(output.write(fd: pair.0, epfd: -1, data: 0) == .failed)
        #expect(output.pending == 7)
        output.discard()
        #expect(output.pending == 0 && output.bytes.isEmpty)
    }

    @Test func consumeAllMarksEverythingWrittenWithoutASocket() {
        var output = OutputBuffer()
        output.bytes = [1, 2, 3]
        output.consumeAll()
        #expect(output.pending == 0)
        #expect(output.write(fd: -1, epfd: -1, data: 0) == .drained)
        #expect(output.start == 0 && output.bytes.isEmpty)
    }

    private func socketPair() throws -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds) == 0 else {
            throw Sys.Failure(call: "socketpair", errno: errno)
        }
        return (fds[0], fds[1])
    }
}
