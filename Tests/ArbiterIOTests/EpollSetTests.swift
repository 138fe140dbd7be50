import ArbiterIO
import CSystem
import Glibc
import Testing

/// A reactor's system-call half, against a real socket pair.
@Suite struct EpollSetTests {
    @Test func aReadableSocketIsReportedWithItsDataAndReadIntoTheBuffer() throws {
        let pair = try socketPair()
        // Closed once: a second close of a number another test running meanwhile got
        // from the kernel would close that test's socket under it.
        var peerOpen = true
        defer {
            Sys.close(pair.0)
            if peerOpen { Sys.close(pair.1) }
        }
        let epoll = try EpollSet()
        #expect(epoll.add(pair.0, events: cs_EPOLLIN | cs_EPOLLRDHUP, data: 7 | 3 << 32) == 0)
        #expect(epoll.wait(timeoutMs: 0) == 0)
        #expect(!epoll.hasReady())
        guard case .wouldBlock = epoll.read(pair.0) else {
            Issue.record("an empty socket must say it would block")
            return
        }

        #expect(Array("DOWN demo b1\n".utf8).withUnsafeBytes { Sys.write(pair.1, $0) } == .bytes(13))
        #expect(epoll.wait(timeoutMs: 1000) == 1)
        let ready = epoll.ready(0)
        #expect(ready.data == 7 | 3 << 32)
        #expect(ready.events & cs_EPOLLIN != 0)
        guard case .bytes(let bytes) = epoll.read(pair.0) else {
            Issue.record("the bytes written must be read")
            return
        }
        #expect(Array(bytes) == Array("DOWN demo b1\n".utf8))

        Sys.close(pair.1)
        peerOpen = false
        #expect(epoll.hasReady())
        guard case .eof = epoll.read(pair.0) else {
            Issue.record("a closed peer must read as end of file")
            return
        }
    }

    @Test func aRemovedSocketIsNoLongerReported() throws {
        let pair = try socketPair()
        defer { Sys.close(pair.0); Sys.close(pair.1) }
        let epoll = try EpollSet()
        epoll.add(pair.0, events: cs_EPOLLIN, data: 1)
        #expect(Array("x".utf8).withUnsafeBytes { Sys.write(pair.1, $0) } == .bytes(1))
        #expect(epoll.hasReady())
        epoll.remove(pair.0)
        #expect(epoll.wait(timeoutMs: 0) == 0)
        // Adding twice is refused with the errno, not hidden.
        epoll.add(pair.0, events: cs_EPOLLIN, data: 1)
        #expect(epoll.add(pair.0, events: cs_EPOLLIN, data: 1) != 0)
    }

    @Test func aModifiedSocketIsReportedForItsNewEventsAndData() throws {
        let pair = try socketPair()
        defer { Sys.close(pair.0); Sys.close(pair.1) }
        let epoll = try EpollSet()
        // An empty socket pair is writable at once: EPOLLOUT shows whether the change took.
        epoll.add(pair.0, events: cs_EPOLLIN, data: 1)
        #expect(epoll.wait(timeoutMs: 0) == 0)
        #expect(epoll.modify(pair.0, events: cs_EPOLLIN | cs_EPOLLOUT, data: 2) == 0)
        #expect(epoll.wait(timeoutMs: 0) == 1)
        #expect(epoll.ready(0).data == 2)
        #expect(epoll.ready(0).events & cs_EPOLLOUT != 0)
        #expect(epoll.modify(pair.0, events: cs_EPOLLIN, data: 3) == 0)
        #expect(epoll.wait(timeoutMs: 0) == 0)
        // A socket never added is refused with the errno, not hidden.
        #expect(epoll.modify(pair.1, events: cs_EPOLLIN, data: 4) == ENOENT)
    }

    private func socketPair() throws -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds) == 0 else {
            throw Sys.Failure(call: "socketpair", errno: errno)
        }
        return (fds[0], fds[1])
    }
}
