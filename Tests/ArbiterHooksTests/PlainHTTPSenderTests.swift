import ArbiterCore
import ArbiterIO
import ArbiterTestSupport
import ArbiterWire
import Dispatch
import Glibc
import Testing

@testable import ArbiterHooks

/// Keep-alive between attempts: a receiver that keeps connections open gets one request
/// after another on one; one that closes them loses nothing.
@Suite struct PlainHTTPSenderTests {
    let sender = PlainHTTPSender()

    func request(_ port: UInt16, _ seq: Int) throws -> HookRequest {
        let url = try HookURL.parse("http://127.0.0.1:\(port)/hook").get()
        return HookRequest(url: url, headers: [("webhook-id", "x_p_\(seq)")], body: Array(#"{"seq":\#(seq)}"#.utf8))
    }

    func send(_ port: UInt16, _ seq: Int, timeoutMs: Int64 = 5000) throws -> HookOutcome {
        let deadline = SystemClock.monotonic.nanoseconds() + timeoutMs * 1_000_000
        return sender.exchange(try request(port, seq), deadline: deadline)
    }

    @Test func aReceiverThatKeepsConnectionsGetsEveryRequestOnOne() throws {
        let receiver = try HookReceiver(.keepAlive(204))
        defer { receiver.close() }
        for seq in 1...20 {
            let outcome = try send(receiver.port, seq)
            #expect(outcome == .status(204), "request \(seq): \(outcome)")
        }
        #expect(receiver.received.map { $0.headers["webhook-id"] } == (1...20).map { "x_p_\($0)" })
        #expect(receiver.accepted == 1)
    }

    @Test func anAnswerWithABodyIsReadWholeAndTheConnectionKept() throws {
        let receiver = try HookReceiver(.keepAlive(200, body: #"{"ok":true}"#))
        defer { receiver.close() }
        for seq in 1...3 {
            let outcome = try send(receiver.port, seq)
            #expect(outcome == .status(200), "request \(seq): \(outcome)")
        }
        #expect(receiver.accepted == 1)
    }

    @Test func aReceiverThatClosesEachConnectionGetsANewOneEachTime() throws {
        let receiver = try HookReceiver(.status(200))
        defer { receiver.close() }
        for seq in 1...3 { #expect(try send(receiver.port, seq) == .status(200)) }
        #expect(receiver.accepted == 3)
    }

    @Test func aKeptConnectionClosedUnderTheNextRequestSendsItAgainOnANewOne() throws {
        let receiver = try HookReceiver(.keepAliveThenDrop(200))
        defer { receiver.close() }
        #expect(try send(receiver.port, 1) == .status(200))
        // The kept connection takes the request and closes without an answer; the same
        // request goes again on a new connection, inside the same attempt.
        #expect(try send(receiver.port, 2) == .status(200))
        #expect(receiver.received.map { $0.headers["webhook-id"] } == ["x_p_1", "x_p_2", "x_p_2"])
        #expect(receiver.accepted == 2)
    }

    @Test func aReceiverThatClosesAfterEachAnswerWithoutSayingSoLosesNothing() throws {
        let receiver = try HookReceiver(.answerThenClose(200))
        defer { receiver.close() }
        // Whether the close is seen before the next request (the pool drops it) or only
        // by it (sent again on a new connection), each request arrives once and succeeds.
        for seq in 1...5 { #expect(try send(receiver.port, seq) == .status(200)) }
        #expect(receiver.received.map { $0.headers["webhook-id"] } == (1...5).map { "x_p_\($0)" })
        #expect(receiver.accepted == 5)
    }

    @Test func aSilentReceiverOnAKeptConnectionTimesOutAndIsNotRetriedInside() throws {
        let receiver = try HookReceiver(.keepAlive(204))
        defer { receiver.close() }
        #expect(try send(receiver.port, 1) == .status(204))
        receiver.behavior = .silent
        let outcome = try send(receiver.port, 2, timeoutMs: 300)
        #expect(outcome == .failed("timed out waiting for the answer"))
        #expect(receiver.received.count == 2)
    }
}

@Suite struct HTTPAnswerFramingTests {
    func framing(_ text: String) -> HTTPAnswerFraming? { HTTPAnswerFraming.complete(Array(text.utf8), limit: 64) }

    @Test func plainAnswersKeepTheConnection() {
        #expect(framing("HTTP/1.1 204 No Content\r\n\r\n") == .reusable)
        #expect(framing("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") == .reusable)
        #expect(framing("HTTP/1.1 200 OK\r\ncontent-length:0\r\nConnection: keep-alive\r\n\r\n") == .reusable)
    }

    @Test func anAnswerStillComingIsNotComplete() {
        #expect(framing("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n") == nil)
        #expect(framing("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\no") == nil)
    }

    @Test func anythingElseClosesIt() {
        #expect(framing("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n") == .close)
        #expect(framing("HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 0\r\n\r\n") == .close)
        #expect(framing("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n") == .close)
        #expect(framing("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n") == .close)
        #expect(framing("HTTP/1.1 200 OK\r\n\r\n") == .close, "a body ended by closing")
        #expect(framing("HTTP/1.1 100 Continue\r\n\r\n") == .close)
        #expect(framing("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nok") == .close)
        #expect(framing("HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok") == .close)
        #expect(framing("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n") == .close, "past what the sender reads")
        #expect(framing("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nHTTP/1.1") == .close, "bytes nobody asked for")
    }
}

@Suite struct IdleConnectionsTests {
    func pair() -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        _ = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds)
        return (fds[0], fds[1])
    }

    @Test func aQuietConnectionIsOfferedAgainWhileFresh() {
        let pool = IdleConnections(capacity: 2)
        let (kept, peer) = pair()
        defer { close(peer) }
        pool.put(kept, now: 1_000)
        #expect(pool.take(now: 1_000 + IdleConnections.maxIdleNs - 1) == kept)
        #expect(pool.take(now: 1_000) == nil)
        close(kept)
    }

    @Test func oneIdleTooLongOrClosedByItsPeerOrSpokenOnIsNot() {
        let pool = IdleConnections(capacity: 4)
        let (old, oldPeer) = pair()
        pool.put(old, now: 0)
        #expect(pool.take(now: IdleConnections.maxIdleNs) == nil)
        let (closed, closedPeer) = pair()
        close(closedPeer)
        pool.put(closed, now: 0)
        #expect(pool.take(now: 0) == nil)
        let (spoken, spokenPeer) = pair()
        _ = send(spokenPeer, "x", 1, 0)
        pool.put(spoken, now: 0)
        #expect(pool.take(now: 0) == nil)
        close(oldPeer)
        close(spokenPeer)
    }

    @Test func pastItsCapacityTheOldestIsClosed() {
        let pool = IdleConnections(capacity: 1)
        let (first, firstPeer) = pair()
        let (second, secondPeer) = pair()
        pool.put(first, now: 0)
        pool.put(second, now: 1)
        #expect(pool.take(now: 2) == second)
        #expect(pool.take(now: 2) == nil)
        // The first was closed: its peer reads the end of the stream.
        var byte: UInt8 = 0
        #expect(recv(firstPeer, &byte, 1, Int32(MSG_DONTWAIT)) == 0)
        for fd in [second, firstPeer, secondPeer] { close(fd) }
    }
}
