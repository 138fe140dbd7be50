import ArbiterCore
import ArbiterWire

/// A connection's life as one value: which peer it turned out to be, what its bytes
/// are for, and how it ends. Each event method moves the state and returns what the
/// reactor must do; the machine makes no system call and reads no clock, so every
/// state × event pair is a unit test (`ConnectionStateMachineTests`).
///
/// Owned by the connection's reactor queue. What other threads must know of it (may
/// output still be appended? is the descriptor closed?) is published in the lock-guarded
/// `OutputGate` by the reactor, in the same step as the transition that changes it.
///
/// Style of async-http-client's `HTTP1ConnectionStateMachine`: every switch lists every
/// state, and `modifying` exists only inside a method that mutates a payload in place
/// (so a parser's buffer is not copied); no caller ever sees it.
struct ConnectionStateMachine {
    /// The first bytes of another cluster node's relay handshake (`RELAY-HELLO`), which the
    /// port hands to the relay (`ServerConfiguration.relayHandOff`).
    static let relayPrefix = Array("RELAY-".utf8)

    enum State {
        /// Not yet known to be HTTP or a line peer: its first bytes, kept for replay.
        case detecting([UInt8])
        /// A line peer; its framer is `Connection.framer`, kept out of the enum so a read
        /// does not move it in and out.
        case line
        /// An HTTP peer, and since when a request head has been arriving unfinished.
        case http(HTTPRequestParser, waitingSince: Instant?)
        /// An HTTP peer whose request is being answered with what other nodes say (cluster
        /// mode's `/api/panels`, `LeaderStateGather`): later request heads wait in the parser,
        /// so responses keep the order of the requests.
        case httpAnswering(HTTPRequestParser)
        /// A WebSocket, and when it was pinged for being silent, if it was.
        case webSocket(WebSocketReader, WebSocketUse, pingSentAt: Instant?)
        /// Reading is over; the last words are being written, then the socket closes.
        case closing(PeerKind)
        /// The descriptor is closed.
        case closed(PeerKind)
        /// A relay link (cluster mode): the descriptor now belongs to the relay network,
        /// which closes it; the reactor only stopped watching it.
        case handedOff
        /// Inside a method only: a payload is being changed in place.
        case modifying
    }

    enum Action: Equatable {
        /// Nothing to do now (more bytes are awaited, or the event changes nothing).
        case none
        /// Frame the bytes just read as lines (`Connection.framer`).
        case frameLines
        /// Now a line peer: send WELCOME, then frame these bytes read before it.
        case greetAndFrame(replay: [UInt8])
        /// Answer the complete request heads buffered (`nextHTTPHead`).
        case serveHTTP
        /// Decode the complete messages buffered (`nextWebSocketMessage`).
        case readWebSocket(WebSocketUse)
        /// The connection is closing: send these as its last output, close once written.
        case sendLast(LastWords)
        /// Send a WebSocket ping.
        case sendPing
        /// Close the socket now.
        case closeSocket(reason: String)
        /// The first bytes are a relay handshake: stop watching the socket, without
        /// closing it or writing anything, and give it and these bytes to the relay.
        case handOff(firstBytes: [UInt8])
    }

    private(set) var state: State = .detecting([])
    let admission: Admission
    let limits: ConnectionLimits
    let acceptedAt: Instant

    init(admission: Admission, limits: ConnectionLimits, acceptedAt: Instant) {
        self.admission = admission
        self.limits = limits
        self.acceptedAt = acceptedAt
    }

    /// What the connection turned out to be, for logs and replies.
    var kind: PeerKind {
        switch state {
        case .detecting: .unknown
        case .line: .line
        case .http, .httpAnswering: .http
        case .webSocket: .websocket
        case .closing(let kind), .closed(let kind): kind
        case .handedOff: .relay
        case .modifying: .unknown
        }
    }

    /// Whether commands the session sent may still run: not once it is closing (after
    /// QUIT, or its last words) or closed.
    var runsCommands: Bool {
        switch state {
        case .detecting, .line, .http, .httpAnswering, .webSocket: true
        case .closing, .closed, .handedOff, .modifying: false
        }
    }

    // MARK: Reading

    /// Bytes arrived at `now`.
    mutating func bytesArrived(_ bytes: UnsafeBufferPointer<UInt8>, at now: Instant) -> Action {
        switch state {
        case .line:
            return .frameLines
        case .detecting(var buffered):
            state = .modifying
            buffered.append(contentsOf: bytes)
            // Checked first: `RELAY-HELLO` would otherwise pass for an HTTP method until
            // its third word. Without the hook it is just an unknown command.
            if limits.acceptsRelays, buffered.starts(with: Self.relayPrefix) {
                state = .handedOff
                return .handOff(firstBytes: buffered)
            }
            switch ProtocolDetector.classify(buffered) {
            case .line:
                return becomeLinePeer(replaying: buffered)
            case .http:
                var parser = HTTPRequestParser(maxHeadBytes: limits.maxHTTPHeadBytes)
                parser.append(buffered)
                state = .http(parser, waitingSince: nil)
                return .serveHTTP
            case .needMoreBytes:
                // A "first line" longer than any line: not HTTP; the framer says it is too long.
                if buffered.count > limits.maxLineBytes { return becomeLinePeer(replaying: buffered) }
                state = .detecting(buffered)
                return .none
            }
        case .http(var parser, let since):
            state = .modifying
            parser.append(bytes)
            state = .http(parser, waitingSince: since)
            return .serveHTTP
        case .httpAnswering(var parser):
            // Kept for after the answer, within what a pipelining client may have in
            // flight; beyond that the peer is not waiting for answers.
            guard parser.bufferedByteCount + bytes.count <= limits.maxHTTPHeadBytes * 16 else {
                state = .closing(.http)
                return .closeSocket(reason: "too many bytes sent while a request was being answered")
            }
            state = .modifying
            parser.append(bytes)
            state = .httpAnswering(parser)
            return .none
        case .webSocket(var reader, let use, _):
            state = .modifying
            reader.append(bytes)
            // Any bytes answer a ping.
            state = .webSocket(reader, use, pingSentAt: nil)
            return .readWebSocket(use)
        case .closing, .closed, .handedOff:
            return .none
        case .modifying:
            preconditionFailure("ConnectionStateMachine.modifying seen outside a transition")
        }
    }

    /// The WELCOME deadline passed. A peer that has sent nothing becomes a line peer,
    /// unless bytes already wait in its socket (a browser that opened it early).
    mutating func greetingDeadlinePassed(socketHasBytes: @autoclosure () -> Bool) -> Action {
        switch state {
        case .detecting(let buffered):
            guard buffered.isEmpty, !socketHasBytes() else { return .none }
            return becomeLinePeer(replaying: [])
        case .line, .http, .httpAnswering, .webSocket, .closing, .closed, .handedOff:
            return .none
        case .modifying:
            preconditionFailure("ConnectionStateMachine.modifying seen outside a transition")
        }
    }

    private mutating func becomeLinePeer(replaying buffered: [UInt8]) -> Action {
        switch admission {
        case .served:
            state = .line
            return .greetAndFrame(replay: buffered)
        case .overCapacity, .pastReserve:
            state = .closing(.line)
            return .sendLast(.serverFull)
        }
    }

    // MARK: HTTP

    /// The next complete request head, parsed in place; nil when none is complete or the
    /// connection is not (or no longer) serving HTTP.
    mutating func nextHTTPHead() throws(HTTPParseError) -> HTTPRequestHead? {
        guard case .http(var parser, let since) = state else { return nil }
        state = .modifying
        defer { state = .http(parser, waitingSince: since) }
        return try parser.next()
    }

    /// Whether the HTTP parser can go on to a next request (it cannot skip a chunked body).
    var httpCanContinue: Bool {
        guard case .http(let parser, _) = state else { return false }
        return !parser.isStopped
    }

    /// The request just read will be answered later (`answerArrived`); until then no
    /// later head is served. False (and nothing changes) when not serving HTTP.
    mutating func awaitAnswer() -> Bool {
        switch state {
        case .http(let parser, _):
            state = .httpAnswering(parser)
            return true
        case .detecting, .line, .httpAnswering, .webSocket, .closing, .closed, .handedOff:
            return false
        case .modifying:
            preconditionFailure("ConnectionStateMachine.modifying seen outside a transition")
        }
    }

    /// The awaited answer is ready: true when it is to be written, and the heads that
    /// waited are served next (`nextHTTPHead`); false when the connection ended meanwhile.
    mutating func answerArrived() -> Bool {
        switch state {
        case .httpAnswering(let parser):
            state = .http(parser, waitingSince: nil)
            return true
        case .detecting, .line, .http, .webSocket, .closing, .closed, .handedOff:
            return false
        case .modifying:
            preconditionFailure("ConnectionStateMachine.modifying seen outside a transition")
        }
    }

    /// Every complete head was answered: if part of one is buffered, its clock runs
    /// from when it began.
    mutating func httpHeadsAnswered(at now: Instant) {
        guard case .http(let parser, let since) = state else { return }
        let waiting = parser.bufferedByteCount > 0 ? (since ?? now) : nil
        state = .http(parser, waitingSince: waiting)
    }

    /// The handshake was answered: the connection is now a WebSocket. Bytes after the
    /// request head are handed to `reader`. Returns false (and changes nothing) when the
    /// connection is not serving HTTP.
    mutating func upgrade(to use: WebSocketUse, reader: WebSocketReader) -> Bool {
        switch state {
        case .http(var parser, _):
            state = .modifying
            var reader = reader
            reader.append(parser.takeBufferedBytes())
            state = .webSocket(reader, use, pingSentAt: nil)
            return true
        case .detecting, .line, .httpAnswering, .webSocket, .closing, .closed, .handedOff:
            return false
        case .modifying:
            preconditionFailure("ConnectionStateMachine.modifying seen outside a transition")
        }
    }

    // MARK: WebSocket

    /// The next complete message, decoded in place; nil when none is complete or the
    /// connection is not (or no longer) a WebSocket.
    mutating func nextWebSocketMessage() throws(WebSocketError) -> WebSocketMessage? {
        guard case .webSocket(var reader, let use, let ping) = state else { return nil }
        state = .modifying
        defer { state = .webSocket(reader, use, pingSentAt: ping) }
        return try reader.next()
    }

    // MARK: Ending

    /// The reactor (or a command) decided to end the connection with a last output of
    /// its own (an HTTP response, a close frame, `OK QUIT`). True when that output must be
    /// sent; false when the connection was already ending, and nothing more goes out.
    mutating func finish() -> Bool {
        switch state {
        case .detecting, .line, .http, .httpAnswering, .webSocket:
            state = .closing(kind)
            return true
        case .closing, .closed, .handedOff:
            return false
        case .modifying:
            preconditionFailure("ConnectionStateMachine.modifying seen outside a transition")
        }
    }

    /// The server is shutting down: say goodbye where the protocol has words for it.
    mutating func shutdown() -> Action {
        switch state {
        case .line:
            state = .closing(.line)
            return .sendLast(.shutdownBye)
        case .webSocket:
            state = .closing(.websocket)
            return .sendLast(.goingAway)
        case .detecting, .http, .httpAnswering, .closing:
            return .closeSocket(reason: "shutdown")
        case .closed, .handedOff:
            return .none
        case .modifying:
            preconditionFailure("ConnectionStateMachine.modifying seen outside a transition")
        }
    }

    /// The descriptor is being closed. True the first time; false when it already was,
    /// or when it was handed to the relay (whose descriptor it is now).
    mutating func socketClosed() -> Bool {
        switch state {
        case .detecting, .line, .http, .httpAnswering, .webSocket, .closing:
            state = .closed(kind)
            return true
        case .closed, .handedOff:
            return false
        case .modifying:
            preconditionFailure("ConnectionStateMachine.modifying seen outside a transition")
        }
    }

    // MARK: Time

    /// The once-a-second look at the clock: heads that take too long, silent WebSockets
    /// to ping or drop, idle line peers. `lastReadAt` is when bytes last arrived.
    mutating func sweep(now: Instant, lastReadAt: Instant) -> Action {
        switch state {
        case .detecting(let buffered):
            // A first line begun long ago and still undecided: not HTTP after all.
            guard !buffered.isEmpty, now.since(acceptedAt) > limits.headTimeoutMs else { return .none }
            return becomeLinePeer(replaying: buffered)
        case .http(_, let since):
            guard let since, now.since(since) > limits.headTimeoutMs else { return .none }
            state = .closing(.http)
            return .sendLast(.requestTimeout)
        case .httpAnswering:
            // The answer has a deadline of its own (`LeaderStateGather`); heads that arrive
            // meanwhile are timed once it is written.
            return .none
        case .webSocket(let reader, let use, let ping):
            if let ping {
                return now.since(ping) > limits.webSocketPongTimeoutMs ? .closeSocket(reason: "websocket silent after ping") : .none
            }
            guard now.since(lastReadAt) > limits.webSocketPingIntervalMs else { return .none }
            state = .webSocket(reader, use, pingSentAt: now)
            return .sendPing
        case .line:
            guard limits.idleTimeoutMs > 0, now.since(lastReadAt) > limits.idleTimeoutMs else { return .none }
            state = .closing(.line)
            return .sendLast(.idleBye)
        case .closing, .closed, .handedOff:
            return .none
        case .modifying:
            preconditionFailure("ConnectionStateMachine.modifying seen outside a transition")
        }
    }
}
