import ArbiterCore
@testable import ArbiterServer
import ArbiterWire
import Testing

/// Every state of a connection's life against every event, without a socket or a clock.
@Suite("connection state machine")
struct ConnectionStateMachineTests {
    typealias Machine = ConnectionStateMachine

    static let t0 = Instant(milliseconds: 1_000)

    static func limits() -> ConnectionLimits {
        var configuration = ServerConfiguration()
        configuration.maxLineBytes = 16
        configuration.headTimeoutMs = 100
        configuration.idleTimeoutMs = 300
        configuration.webSocketPingIntervalMs = 1_000
        configuration.webSocketPongTimeoutMs = 500
        return ConnectionLimits(configuration)
    }

    /// The states, each reached the way a real connection reaches it.
    enum Start: String, CaseIterable, CustomTestStringConvertible {
        case detectingSilent, detectingBegun, line, http, httpWaiting, httpAnswering, webSocket, webSocketPinged, echo, closingLine, closedHTTP, handedOff
        var testDescription: String { rawValue }

        func machine(_ admission: Admission = .served) -> Machine {
            var limits = ConnectionStateMachineTests.limits()
            limits.acceptsRelays = self == .handedOff
            var m = Machine(admission: admission, limits: limits, acceptedAt: t0)
            switch self {
            case .detectingSilent: break
            case .detectingBegun: _ = m.feed("GE", at: t0)
            case .line: _ = m.feed("PING\n", at: t0)
            case .http: _ = m.feed("GET / HTTP/1.1\r\n\r\n", at: t0); _ = try? m.nextHTTPHead()
            case .httpWaiting: _ = m.feed("GET / HTTP/1.1\r\nHo", at: t0); m.httpHeadsAnswered(at: t0)
            case .httpAnswering: _ = m.feed("GET /api/panels HTTP/1.1\r\n\r\n", at: t0); _ = try? m.nextHTTPHead(); _ = m.awaitAnswer()
            case .webSocket, .webSocketPinged, .echo:
                _ = m.feed("GET /ws HTTP/1.1\r\n\r\n", at: t0)
                _ = try? m.nextHTTPHead()
                _ = m.upgrade(to: self == .echo ? .echo : .commands, reader: WebSocketReader(maxPayload: 64, maxMessage: 64))
                if self == .webSocketPinged { _ = m.sweep(now: t0 + 1_001, lastReadAt: t0) }
            case .closingLine: _ = m.feed("PING\n", at: t0); _ = m.finish()
            case .closedHTTP: _ = m.feed("GET / HTTP/1.1\r\n\r\n", at: t0); _ = m.socketClosed()
            case .handedOff: _ = m.feed("RELAY-HELLO 1 n1 00\n", at: t0)
            }
            return m
        }
    }

    @Test func theStartingStatesAreWhatTheySay() {
        let seen = Start.allCases.map { Self.describe($0.machine().state) }
        #expect(
            seen == [
                "detecting(0)", "detecting(2)", "line", "http(nil)", "http(1000000000ns)", "httpAnswering(0)", "webSocket(commands, nil)",
                "webSocket(commands, 2001000000ns)", "webSocket(echo, nil)", "closing(line)", "closed(http)", "handedOff",
            ])
    }

    // MARK: bytesArrived

    @Test(arguments: Start.allCases) func bytesArrived(_ start: Start) {
        var m = start.machine()
        // Uppercase: still possibly an HTTP method, so detection goes on.
        let action = m.feed("X", at: Self.t0 + 5)
        let expected: (Machine.Action, String) =
            switch start {
            case .detectingSilent: (.none, "detecting(1)")
            case .detectingBegun: (.none, "detecting(3)")
            case .line: (.frameLines, "line")
            case .http: (.serveHTTP, "http(nil)")
            case .httpWaiting: (.serveHTTP, "http(1000000000ns)")
            // Kept for after the answer, not served before it.
            case .httpAnswering: (.none, "httpAnswering(1)")
            // Any bytes answer a ping.
            case .webSocket, .webSocketPinged: (.readWebSocket(.commands), "webSocket(commands, nil)")
            case .echo: (.readWebSocket(.echo), "webSocket(echo, nil)")
            case .closingLine: (.none, "closing(line)")
            case .closedHTTP: (.none, "closed(http)")
            // The relay reads its socket now.
            case .handedOff: (.none, "handedOff")
            }
        #expect(action == expected.0)
        #expect(Self.describe(m.state) == expected.1)
    }

    @Test func detectionReplaysWhatItBuffered() {
        var m = Start.detectingSilent.machine()
        let r1 = m.feed("PI", at: Self.t0)
        #expect(r1 == .none)
        let r2 = m.feed("NG\n", at: Self.t0)
        #expect(r2 == .greetAndFrame(replay: Array("PING\n".utf8)))
        #expect(m.kind == .line)
        var h = Start.detectingSilent.machine()
        let r3 = h.feed("GET / HTTP/1.1\r\n", at: Self.t0)
        #expect(r3 == .serveHTTP)
        #expect(h.kind == .http)
    }

    @Test func anUndecidedFirstLineLongerThanAnyLineIsALinePeer() {
        var m = Start.detectingSilent.machine()
        // Uppercase letters could still be an HTTP method; past 16 bytes they cannot be.
        let r4 = m.feed("ABCDEFGHIJKLMNOP", at: Self.t0)
        #expect(r4 == .none)
        let r5 = m.feed("Q", at: Self.t0)
        #expect(r5 == .greetAndFrame(replay: Array("ABCDEFGHIJKLMNOPQ".utf8)))
    }

    @Test(arguments: [Admission.overCapacity, .pastReserve]) func aLinePeerPastCapacityIsToldAndClosed(_ admission: Admission) {
        var m = Start.detectingSilent.machine(admission)
        let r6 = m.feed("PING\n", at: Self.t0)
        #expect(r6 == .sendLast(.serverFull))
        #expect(Self.describe(m.state) == "closing(line)")
        #expect(!m.runsCommands)
        var silent = Start.detectingSilent.machine(admission)
        let r7 = silent.greetingDeadlinePassed(socketHasBytes: false)
        #expect(r7 == .sendLast(.serverFull))
    }

    // MARK: greetingDeadlinePassed

    @Test(arguments: Start.allCases) func greetingDeadline(_ start: Start) {
        var m = start.machine()
        let before = Self.describe(m.state)
        let action = m.greetingDeadlinePassed(socketHasBytes: false)
        if start == .detectingSilent {
            #expect(action == .greetAndFrame(replay: []))
            #expect(Self.describe(m.state) == "line")
        } else {
            #expect(action == .none)
            #expect(Self.describe(m.state) == before)
        }
    }

    @Test func noWelcomeWhileBytesWaitInTheSocket() {
        var m = Start.detectingSilent.machine()
        let r8 = m.greetingDeadlinePassed(socketHasBytes: true)
        #expect(r8 == .none)
        #expect(Self.describe(m.state) == "detecting(0)")
    }

    // MARK: HTTP

    @Test(arguments: Start.allCases) func nextHTTPHeadOnlyServesHTTP(_ start: Start) throws {
        var m = start.machine()
        let before = Self.describe(m.state)
        let r9 = try m.nextHTTPHead()
        #expect(r9 == nil)
        #expect(Self.describe(m.state) == before)
    }

    @Test func pipelinedHeadsComeOutInOrderAndAPartOneStartsItsClock() throws {
        var m = Start.detectingSilent.machine()
        _ = m.feed("GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\nGET /c", at: Self.t0)
        let r10 = try m.nextHTTPHead()
        #expect(r10?.path == "/a")
        let r11 = try m.nextHTTPHead()
        #expect(r11?.path == "/b")
        let r12 = try m.nextHTTPHead()
        #expect(r12 == nil)
        m.httpHeadsAnswered(at: Self.t0 + 7)
        #expect(Self.describe(m.state) == "http(1007000000ns)")
        // The clock runs from when the head began, not from each read.
        m.httpHeadsAnswered(at: Self.t0 + 50)
        #expect(Self.describe(m.state) == "http(1007000000ns)")
    }

    @Test(arguments: Start.allCases) func awaitAnswerOnlyWhileServingHTTP(_ start: Start) {
        var m = start.machine()
        let before = Self.describe(m.state)
        let awaits = m.awaitAnswer()
        #expect(awaits == (start == .http || start == .httpWaiting))
        #expect(Self.describe(m.state) == (awaits ? "httpAnswering(\(start == .httpWaiting ? 18 : 0))" : before))
    }

    @Test(arguments: Start.allCases) func answerArrivedOnlyWhenOneIsAwaited(_ start: Start) {
        var m = start.machine()
        let before = Self.describe(m.state)
        let writes = m.answerArrived()
        #expect(writes == (start == .httpAnswering))
        #expect(Self.describe(m.state) == (writes ? "http(nil)" : before))
    }

    /// Heads that came while a request was answered by other nodes are served after it,
    /// in order; a connection that ended meanwhile gets nothing written.
    @Test func headsThatArriveWhileAnAnswerIsAwaitedComeNextInOrder() throws {
        var m = Start.httpAnswering.machine()
        let r1 = m.feed("GET /b HTTP/1.1\r\n\r\nGET /c HTTP/1.1\r\n\r\n", at: Self.t0)
        #expect(r1 == .none)
        let r2 = try m.nextHTTPHead()
        #expect(r2 == nil, "nothing is served before the awaited answer")
        let arrived = m.answerArrived()
        #expect(arrived)
        let r3 = try m.nextHTTPHead()
        #expect(r3?.path == "/b")
        let r4 = try m.nextHTTPHead()
        #expect(r4?.path == "/c")
        var closed = Start.httpAnswering.machine()
        let closedNow = closed.socketClosed()
        let written = closed.answerArrived()
        #expect(closedNow && !written)
        #expect(Self.describe(closed.state) == "closed(http)")
    }

    /// A peer that keeps sending while its answer is awaited is not buffered without end.
    @Test func aFloodWhileAnAnswerIsAwaitedCloses() {
        var m = Start.httpAnswering.machine()
        let bound = Self.limits().maxHTTPHeadBytes * 16
        let r1 = m.feed([UInt8](repeating: 0x41, count: bound), at: Self.t0)
        #expect(r1 == .none)
        let r2 = m.feed("A", at: Self.t0)
        #expect(r2 == .closeSocket(reason: "too many bytes sent while a request was being answered"))
        #expect(Self.describe(m.state) == "closing(http)")
    }

    @Test(arguments: Start.allCases) func upgradeOnlyFromHTTP(_ start: Start) {
        var m = start.machine()
        let upgraded = m.upgrade(to: .commands, reader: WebSocketReader(maxPayload: 64, maxMessage: 64))
        #expect(upgraded == (start == .http || start == .httpWaiting))
        if upgraded { #expect(Self.describe(m.state) == "webSocket(commands, nil)") }
    }

    @Test func bytesAfterTheHandshakeHeadGoToTheReader() throws {
        var m = Start.detectingSilent.machine()
        // A final text frame "hi", masked with a zero key.
        let frame: [UInt8] = [0x81, 0x82, 0, 0, 0, 0] + Array("hi".utf8)
        _ = m.feed(Array("GET /ws HTTP/1.1\r\n\r\n".utf8) + frame, at: Self.t0)
        _ = try m.nextHTTPHead()
        let upgraded = m.upgrade(to: .commands, reader: WebSocketReader(maxPayload: 64, maxMessage: 64))
        #expect(upgraded)
        let r13 = try m.nextWebSocketMessage()
        #expect(r13 == .text("hi"))
        let r14 = try m.nextWebSocketMessage()
        #expect(r14 == nil)
    }

    @Test(arguments: Start.allCases) func nextWebSocketMessageOnlyOnAWebSocket(_ start: Start) throws {
        var m = start.machine()
        let before = Self.describe(m.state)
        let r15 = try m.nextWebSocketMessage()
        #expect(r15 == nil)
        #expect(Self.describe(m.state) == before)
    }

    // MARK: Ending

    @Test(arguments: Start.allCases) func finish(_ start: Start) {
        var m = start.machine()
        let kind = m.kind
        let sends = m.finish()
        switch start {
        case .closingLine:
            #expect(!sends)
            #expect(Self.describe(m.state) == "closing(line)")
        case .closedHTTP:
            #expect(!sends)
            #expect(Self.describe(m.state) == "closed(http)")
        case .handedOff:
            #expect(!sends)
            #expect(Self.describe(m.state) == "handedOff")
        case .detectingSilent, .detectingBegun, .line, .http, .httpWaiting, .httpAnswering, .webSocket, .webSocketPinged, .echo:
            #expect(sends)
            #expect(Self.describe(m.state) == "closing(\(kind.rawValue))")
            #expect(!m.runsCommands)
            // Bytes after the last words are not read.
            let r16 = m.feed("PING\n", at: Self.t0)
            #expect(r16 == .none)
        }
    }

    @Test(arguments: Start.allCases) func shutdown(_ start: Start) {
        var m = start.machine()
        let action = m.shutdown()
        let expected: (Machine.Action, String) =
            switch start {
            case .line: (.sendLast(.shutdownBye), "closing(line)")
            case .webSocket, .webSocketPinged, .echo: (.sendLast(.goingAway), "closing(websocket)")
            case .detectingSilent, .detectingBegun: (.closeSocket(reason: "shutdown"), Self.describe(start.machine().state))
            case .http, .httpWaiting, .httpAnswering: (.closeSocket(reason: "shutdown"), Self.describe(start.machine().state))
            case .closingLine: (.closeSocket(reason: "shutdown"), "closing(line)")
            case .closedHTTP: (.none, "closed(http)")
            // The relay network closes its links itself (`RelayNetwork.stop`).
            case .handedOff: (.none, "handedOff")
            }
        #expect(action == expected.0)
        #expect(Self.describe(m.state) == expected.1)
    }

    @Test(arguments: Start.allCases.filter { $0 != .handedOff }) func socketClosedOnce(_ start: Start) {
        var m = start.machine()
        let kind = m.kind
        let r17 = m.socketClosed()
        #expect(r17 == (start != .closedHTTP))
        #expect(Self.describe(m.state) == "closed(\(kind.rawValue))")
        let r18 = m.socketClosed()
        #expect(!r18)
        #expect(!m.runsCommands)
        #expect(m.kind == kind)
    }

    // MARK: sweep

    @Test(arguments: Start.allCases) func sweepBeforeAnyLimit(_ start: Start) {
        var m = start.machine()
        let before = Self.describe(m.state)
        let r19 = m.sweep(now: Self.t0 + 50, lastReadAt: Self.t0)
        #expect(r19 == .none)
        #expect(Self.describe(m.state) == before)
    }

    @Test(arguments: Start.allCases) func sweepPastEveryLimit(_ start: Start) {
        var m = start.machine()
        // Past the head (100), idle (300), ping (1000) and, for the pinged one, pong (500) limits.
        let action = m.sweep(now: Self.t0 + 3_000, lastReadAt: Self.t0)
        let expected: (Machine.Action, String) =
            switch start {
            case .detectingSilent: (.none, "detecting(0)")
            case .detectingBegun: (.greetAndFrame(replay: Array("GE".utf8)), "line")
            case .line: (.sendLast(.idleBye), "closing(line)")
            case .http: (.none, "http(nil)")
            case .httpWaiting: (.sendLast(.requestTimeout), "closing(http)")
            // The answer has its own deadline (`LeaderStateGather`).
            case .httpAnswering: (.none, "httpAnswering(0)")
            case .webSocket: (.sendPing, "webSocket(commands, 4000000000ns)")
            case .webSocketPinged: (.closeSocket(reason: "websocket silent after ping"), "webSocket(commands, 2001000000ns)")
            case .echo: (.sendPing, "webSocket(echo, 4000000000ns)")
            case .closingLine: (.none, "closing(line)")
            case .closedHTTP: (.none, "closed(http)")
            case .handedOff: (.none, "handedOff")
            }
        #expect(action == expected.0)
        #expect(Self.describe(m.state) == expected.1)
    }

    @Test func limitsAreExclusiveBoundaries() {
        var line = Start.line.machine()
        let r20 = line.sweep(now: Self.t0 + 300, lastReadAt: Self.t0)
        #expect(r20 == .none)
        let r21 = line.sweep(now: Self.t0 + 301, lastReadAt: Self.t0)
        #expect(r21 == .sendLast(.idleBye))
        var http = Start.httpWaiting.machine()
        let r22 = http.sweep(now: Self.t0 + 100, lastReadAt: Self.t0)
        #expect(r22 == .none)
        let r23 = http.sweep(now: Self.t0 + 101, lastReadAt: Self.t0)
        #expect(r23 == .sendLast(.requestTimeout))
        var pinged = Start.webSocketPinged.machine()
        let r24 = pinged.sweep(now: Self.t0 + 1_001 + 500, lastReadAt: Self.t0)
        #expect(r24 == .none)
        let r25 = pinged.sweep(now: Self.t0 + 1_001 + 501, lastReadAt: Self.t0)
        #expect(r25 == .closeSocket(reason: "websocket silent after ping"))
    }

    @Test func noIdleTimeoutWhenItIsZero() {
        var limits = Self.limits()
        limits.idleTimeoutMs = 0
        var m = Machine(admission: .served, limits: limits, acceptedAt: Self.t0)
        _ = m.feed("PING\n", at: Self.t0)
        let r26 = m.sweep(now: Self.t0 + 1_000_000, lastReadAt: Self.t0)
        #expect(r26 == .none)
    }

    @Test(arguments: Start.allCases) func runsCommandsUntilItEnds(_ start: Start) {
        #expect(start.machine().runsCommands == (start != .closingLine && start != .closedHTTP && start != .handedOff))
    }

    // MARK: Relay hand-off (cluster mode)

    static func relayMachine(_ admission: Admission = .served, acceptsRelays: Bool = true) -> Machine {
        var limits = limits()
        limits.acceptsRelays = acceptsRelays
        return Machine(admission: admission, limits: limits, acceptedAt: t0)
    }

    @Test func relayFirstBytesAreHandedOffUngreetedOnceTheyCanBeTold() {
        var m = Self.relayMachine()
        // "RELAY" could still be a relay or an HTTP method: wait.
        let r1 = m.feed("RELAY", at: Self.t0)
        #expect(r1 == .none)
        #expect(Self.describe(m.state) == "detecting(5)")
        let r2 = m.feed("-HELLO 1 n2 ab", at: Self.t0)
        #expect(r2 == .handOff(firstBytes: Array("RELAY-HELLO 1 n2 ab".utf8)))
        #expect(m.kind == .relay)
        #expect(!m.runsCommands)
        // The descriptor is the relay's now: the reactor must not close it, or greet it.
        let r3 = m.socketClosed()
        #expect(!r3)
        let r4 = m.greetingDeadlinePassed(socketHasBytes: false)
        #expect(r4 == .none)
        #expect(Self.describe(m.state) == "handedOff")
    }

    @Test(arguments: [Admission.overCapacity, .pastReserve]) func aRelayPastCapacityIsStillHandedOff(_ admission: Admission) {
        // Relay links are not client sessions; the relay network bounds its own handshakes.
        var m = Self.relayMachine(admission)
        let r1 = m.feed("RELAY-HELLO 1 n2 ab\n", at: Self.t0)
        #expect(r1 == .handOff(firstBytes: Array("RELAY-HELLO 1 n2 ab\n".utf8)))
    }

    @Test func withoutTheHookARelayHelloIsAnOrdinaryLine() {
        var m = Self.relayMachine(acceptsRelays: false)
        let r1 = m.feed("RELAY-HELLO 1 n2 ab\n", at: Self.t0)
        #expect(r1 == .greetAndFrame(replay: Array("RELAY-HELLO 1 n2 ab\n".utf8)))
        #expect(m.kind == .line)
    }

    @Test func onlyFirstBytesCountAndOtherPeersAreUnchangedWithTheHook() {
        var line = Self.relayMachine()
        let r1 = line.feed("PING\n", at: Self.t0)
        #expect(r1 == .greetAndFrame(replay: Array("PING\n".utf8)))
        let r2 = line.feed("RELAY-HELLO 1 n2 ab\n", at: Self.t0)
        #expect(r2 == .frameLines)
        var http = Self.relayMachine()
        let r3 = http.feed("GET / HTTP/1.1\r\n", at: Self.t0)
        #expect(r3 == .serveHTTP)
        // "RELAX" is no relay: detection goes on as before.
        var other = Self.relayMachine()
        let r4 = other.feed("RELAX\n", at: Self.t0)
        #expect(r4 == .greetAndFrame(replay: Array("RELAX\n".utf8)))
    }

    static func describe(_ state: Machine.State) -> String {
        switch state {
        case .detecting(let buffered): "detecting(\(buffered.count))"
        case .line: "line"
        case .http(_, let since): "http(\(since.map(\.description) ?? "nil"))"
        case .httpAnswering(let parser): "httpAnswering(\(parser.bufferedByteCount))"
        case .webSocket(_, let use, let ping): "webSocket(\(use), \(ping.map(\.description) ?? "nil"))"
        case .closing(let kind): "closing(\(kind.rawValue))"
        case .closed(let kind): "closed(\(kind.rawValue))"
        case .handedOff: "handedOff"
        case .modifying: "modifying"
        }
    }
}

extension ConnectionStateMachine {
    mutating func feed(_ text: String, at now: Instant) -> Action { feed(Array(text.utf8), at: now) }

    mutating func feed(_ bytes: [UInt8], at now: Instant) -> Action {
        bytes.withUnsafeBufferPointer { bytesArrived($0, at: now) }
    }
}
