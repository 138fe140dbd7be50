import ArbiterCore
import ArbiterIO
import ArbiterWire

extension Reactor {
    /// Bytes arrived: the state machine says what they are for.
    func received(_ bytes: UnsafeBufferPointer<UInt8>, on connection: Connection, flush: inout FlushList) {
        assertOnQueue()
        let now = Instant(nanoseconds: batchNanos)
        connection.lastReadAt = now
        perform(connection.machine.bytesArrived(bytes, at: now), bytes, on: connection, flush: &flush)
    }

    /// The WELCOME deadline passed: a peer that has sent nothing is a line peer; one
    /// whose first line has begun is awaited.
    func greetIfSilent(_ connection: Connection, flush: inout FlushList) {
        // Bytes already in the socket that this queue has not read yet: a browser's
        // request on a socket it opened early must not meet a WELCOME. Read first.
        let action = connection.machine.greetingDeadlinePassed(socketHasBytes: Sys.hasPendingBytes(connection.fd))
        perform(action, nil, on: connection, flush: &flush)
    }

    /// Carries out what the state machine decided. `bytes` are the ones just read, if
    /// the action was decided on reading them.
    func perform(
        _ action: ConnectionStateMachine.Action, _ bytes: UnsafeBufferPointer<UInt8>?, on connection: Connection,
        flush: inout FlushList
    ) {
        switch action {
        case .none:
            return
        case .frameLines:
            guard let bytes else { return }
            frame(bytes, with: &connection.framer, on: connection, flush: &flush)
        case .greetAndFrame(let replay):
            let name = connection.name
            flush.append(to: connection) { out, format in
                MessageEncoder.encode(.welcome(session: connection.session, name: name), format: format, into: &out)
            }
            connection.framer = LineFramer(maxLineBytes: server.configuration.maxLineBytes)
            replay.withUnsafeBufferPointer { frame($0, with: &connection.framer, on: connection, flush: &flush) }
        case .serveHTTP:
            serveHTTP(connection, flush: &flush)
        case .readWebSocket(let use):
            readWebSocket(connection, use: use, flush: &flush)
        case .sendLast(let words):
            sendLast(words, to: connection, flush: &flush)
        case .sendPing:
            flush.append(to: connection, raw: true) { out, _ in
                out.append(contentsOf: WebSocketFrameEncoder.pingFrame())
            }
        case .closeSocket(let reason):
            close(connection, reason: reason)
        case .handOff(let firstBytes):
            handOff(connection, firstBytes: firstBytes)
        }
    }

    /// The last output the state machine chose; the connection closes once it is written.
    func sendLast(_ words: LastWords, to connection: Connection, flush: inout FlushList) {
        switch words {
        case .serverFull:
            let limit = server.configuration.maxConnections
            flush.appendLast(to: connection) { out, format in
                MessageEncoder.encode(.error(.serverFull, "the server has its \(limit) connections; try again later"), format: format, into: &out)
            }
        case .idleBye:
            flush.appendLast(to: connection) { out, format in
                MessageEncoder.encode(.bye(reason: "idle"), format: format, into: &out)
            }
        case .shutdownBye:
            flush.appendLast(to: connection) { out, format in
                MessageEncoder.encode(.bye(reason: "shutdown"), format: format, into: &out)
            }
        case .requestTimeout:
            let response = HTTPResponse.serialize(
                status: 408, headers: [("Content-Type", "text/plain; charset=utf-8")],
                body: Array("request head not received in time\n".utf8), keepAlive: false)
            flush.appendLast(to: connection, raw: true) { out, _ in out.append(contentsOf: response) }
        case .goingAway:
            flush.appendLast(to: connection, raw: true) { out, _ in
                out.append(contentsOf: WebSocketFrameEncoder.closeFrame(code: WebSocketCloseCode.goingAway, reason: "server shutting down"))
            }
        }
    }

    private func frame(_ bytes: UnsafeBufferPointer<UInt8>, with framer: inout LineFramer, on connection: Connection, flush: inout FlushList) {
        let maxLine = framer.maxLineBytes
        let receivedAt = batchNanos
        framer.feed(bytes) { piece in
            switch piece {
            case .line(let line):
                // The press path: ids looked up straight from the bytes.
                if let scanned = FastLineParser.scanPress(line), let press = server.resolvePress(scanned) {
                    // Refused here, once: handing it to the general path would take (and
                    // count) a second token for the same line.
                    guard admitPress(connection, at: receivedAt, down: press.verb == .down) else {
                        jobs.append(rateLimited(.text))
                        return
                    }
                    // Nothing of this read before it, and the round's deferred presses
                    // are for the same panel: it joins them (see `deferPresses`).
                    if jobs.isEmpty, deferredPanel == nil || deferredPanel == press.panel {
                        connection.touch(press.panel)
                        deferredPanel = press.panel
                        deferred.append((connection, press, receivedAt))
                    } else {
                        jobs.append(.press(press, receivedAt: receivedAt))
                    }
                    return
                }
                switch TextCommandParser.parse(line) {
                case .empty: break
                case .command(let command):
                    if admit(command.request, connection, at: receivedAt) {
                        jobs.append(.command(command, receivedAt: receivedAt))
                    } else {
                        jobs.append(rateLimited(command.format))
                    }
                case .failure(let error): jobs.append(.failure(error))
                }
            case .tooLong:
                jobs.append(.failure(RequestError(.lineTooLong, "line longer than \(maxLine) bytes; the rest of it was skipped")))
            }
        }
        guard !jobs.isEmpty else { return }
        runDeferredPresses(flush: &flush)
        runner.run(jobs, for: connection, flush: &flush)
        jobs.removeAll(keepingCapacity: true)
    }

    // Presses of one round wait until its end, so that every connection's presses for a
    // panel enter its queue in one visit (each `queue.sync` costs a block allocation in
    // the Dispatch overlay). A connection's own order is kept: a press joins the deferred
    // ones only when nothing of its read came before it, and anything else a connection
    // sends runs the deferred presses first.

    /// Runs the presses deferred in this round, in one visit to their panel's queue.
    func runDeferredPresses(flush: inout FlushList) {
        assertOnQueue()
        guard let panel = deferredPanel else { return }
        runner.runPresses(deferred, on: server.panels[panel], flush: &flush)
        deferred.removeAll(keepingCapacity: true)
        deferredPanel = nil
    }

    /// `admit` for a resolved press: releases always pass; a DOWN over the limit is
    /// answered `rate-limited` in its place among the replies.
    func admitPress(_ connection: Connection, at now: Int64, down: Bool) -> Bool {
        !down || takeToken(connection, at: now)
    }

    /// Whether a command may run under the session's rate limit. Commands that only let
    /// go (UP, CANCEL, LEAVE, QUIT) always pass and cost no token: dropping a release
    /// would leave a button held, and a flood of them can take nothing from anyone.
    func admit(_ request: Request, _ connection: Connection, at now: Int64) -> Bool {
        switch request {
        case .press(let press) where press.verb != .down: true
        case .leave, .quit: true
        default: takeToken(connection, at: now)
        }
    }

    /// Takes a token from the session's bucket; false when the command must be dropped.
    private func takeToken(_ connection: Connection, at now: Int64) -> Bool {
        let rate = server.configuration.commandsPerSecond
        guard rate > 0 else { return true }
        let burst = Double(server.configuration.commandBurst)
        connection.tokens = min(burst, connection.tokens + Double(now - connection.tokensAt) * Double(rate) / 1e9)
        connection.tokensAt = now
        guard connection.tokens >= 1 else {
            server.metrics.add(.rateLimited)
            return false
        }
        connection.tokens -= 1
        return true
    }

    func rateLimited(_ format: WireFormat) -> Job {
        .failure(
            RequestError(
                .rateLimited,
                "over \(server.configuration.commandBurst) commands at once or \(server.configuration.commandsPerSecond) a second; this one was dropped",
                format: format))
    }
}
