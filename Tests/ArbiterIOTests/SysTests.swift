import ArbiterIO
import Glibc
import Testing

/// The wrappers the server and the load generator share, against real loopback sockets.
@Suite struct SysTests {
    @Test func connectReachesListenAndBytesCrossBothWays() throws {
        let listener = try Sys.listen(host: "127.0.0.1", port: 0, backlog: 8)
        defer { Sys.close(listener.fd) }
        #expect(listener.port != 0)
        let client = try Sys.connect(host: "localhost", port: listener.port).get()
        // Closed once: a second close of a number another test running meanwhile got
        // from the kernel would close that test's socket under it.
        var clientOpen = true
        defer { if clientOpen { Sys.close(client) } }
        let server = try accepted(on: listener.fd)
        defer { Sys.close(server) }
        #expect(waitWritable(client))
        #expect(Sys.pendingError(client) == 0)

        var scratch = [UInt8](repeating: 0, count: 16)
        // Nothing sent yet: a non-blocking read says so instead of blocking or failing.
        #expect(scratch.withUnsafeMutableBytes { Sys.read(server, into: $0) } == .wouldBlock)
        #expect(Array("DOWN 1\n".utf8).withUnsafeBytes { Sys.write(client, $0) } == .bytes(7))
        #expect(waitReadable(server))
        #expect(Sys.hasPendingBytes(server))
        #expect(scratch.withUnsafeMutableBytes { Sys.read(server, into: $0) } == .bytes(7))
        #expect(Array(scratch[..<7]) == Array("DOWN 1\n".utf8))

        Sys.close(client)
        clientOpen = false
        #expect(waitReadable(server))
        #expect(scratch.withUnsafeMutableBytes { Sys.read(server, into: $0) } == .eof)
    }

    @Test func listenOnIPv6LoopbackTakesBracketlessConnects() throws {
        guard let listener = try? Sys.listen(host: "::1", port: 0, backlog: 8) else { return }  // no IPv6 here
        defer { Sys.close(listener.fd) }
        let client = try Sys.connect(host: "[::1]", port: listener.port).get()
        defer { Sys.close(client) }
        let server = try accepted(on: listener.fd)
        Sys.close(server)
    }

    @Test func connectToAClosedPortFailsWithItsErrno() throws {
        // A port just released by a listener: nothing answers there.
        let listener = try Sys.listen(host: "127.0.0.1", port: 0, backlog: 1)
        Sys.close(listener.fd)
        switch Sys.connect(host: "127.0.0.1", port: listener.port) {
        case .success(let fd):
            defer { Sys.close(fd) }
            #expect(waitWritable(fd))
            #expect(Sys.pendingError(fd) == ECONNREFUSED)
        case .failure(let failure):
            #expect(failure.errno == ECONNREFUSED)
        }
    }

    @Test func connectRefusesANameWithoutResolvingIt() {
        guard case .failure(let failure) = Sys.connect(host: "example.org", port: 80) else {
            Issue.record("a host name must not be connected to")
            return
        }
        #expect(failure.errno == EINVAL)
        #expect(failure.description == "connect example.org:80: Invalid argument")
        #expect(failure.reason == "Invalid argument")
    }

    @Test func listenOnANonAddressSaysWhichCall() {
        #expect(throws: Sys.Failure(call: "inet_pton(panel.local)", errno: EINVAL)) {
            try Sys.listen(host: "panel.local", port: 0, backlog: 1)
        }
    }

    @Test func readSmallFileReadsWholeFilesUpToItsLimit() throws {
        var template = Array("/tmp/arbiter-io-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        try #require(fd >= 0)
        let path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        defer { unlink(path) }
        // Larger than one 4096-byte read, so the loop has to go round.
        let text = (0..<1000).map { "line \($0)\n" }.joined()
        #expect(Sys.writeAll(fd, Array(text.utf8)) == 0)
        Sys.close(fd)
        #expect(Sys.readSmallFile(path) == Array(text.utf8))
        #expect(Sys.readSmallFile(path, limit: 10) == Array(text.utf8.prefix(10)))
        #expect(Sys.readSmallFile(path + ".missing") == nil)
        #expect(Sys.readSmallFile("/proc/self/status").map { String(decoding: $0, as: UTF8.self).contains("VmRSS:") } == true)
    }

    @Test func fileLimitIsRaisedNoLowerThanItWas() {
        var before = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &before)
        let now = Sys.raiseFileLimit(to: Int(before.rlim_cur) + 1)
        #expect(now >= Int(before.rlim_cur))
        #expect(Sys.raiseFileLimit(to: 1) == now)
    }

    @Test func monotonicReadingsAgreeAcrossUnits() {
        let ns = SystemClock.monotonic.nanoseconds()
        let ms = SystemClock.monotonic.milliseconds()
        let ns2 = SystemClock.monotonic.nanoseconds()
        #expect(ns <= ns2)
        #expect(ms >= ns / 1_000_000 && ms <= ns2 / 1_000_000)
    }

    // MARK: helpers, each bounded

    private func accepted(on listener: Int32) throws -> Int32 {
        for _ in 0..<200 {
            switch Sys.accept(listener) {
            case .accepted(let fd, _): return fd
            case .wouldBlock: _ = waitReadable(listener)
            case .failed(let e): throw Sys.Failure(call: "accept", errno: e)
            }
        }
        throw Sys.Failure(call: "accept", errno: ETIMEDOUT)
    }

    private func waitReadable(_ fd: Int32) -> Bool { poll(fd, Int16(POLLIN)) }
    private func waitWritable(_ fd: Int32) -> Bool { poll(fd, Int16(POLLOUT)) }

    private func poll(_ fd: Int32, _ events: Int16) -> Bool {
        var entry = pollfd(fd: fd, events: events, revents: 0)
        return Glibc.poll(&entry, 1, 5000) == 1
    }
}
