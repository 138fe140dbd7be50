import ArbiterCore
import ArbiterWire

extension Reactor {
    /// Bytes arrived: detect the peer's kind once, then frame and decode.
    func received(_ bytes: UnsafeBufferPointer<UInt8>, on connection: Connection, flush: inout FlushList) {
        connection.lastReadAt = Instant(nanoseconds: batchNanos)
        connection.pingSentAt = nil
        switch connection.mode {
        case .detecting(var buffered):
            connection.mode = .closing  // let go of the array so appending does not copy it
            buffered.append(contentsOf: bytes)
            switch ProtocolDetector.classify(buffered) {
            case .line:
                becomeLinePeer(connection, replaying: buffered, flush: &flush)
            case .http:
                connection.kind = .http
                var parser = HTTPRequestParser(maxHeadBytes: server.configuration.maxHTTPHeadBytes)
                parser.append(buffered)
                serveHTTP(connection, parser, flush: &flush)
            case .needMoreBytes:
                if buffered.count > server.configuration.maxLineBytes {
                    becomeLinePeer(connection, replaying: buffered, flush: &flush)
                } else {
                    connection.mode = .detecting(buffered)
                }
            }
        case .line:
            frame(bytes, with: &connection.framer, on: connection, flush: &flush)
        case .http(var parser):
            connection.mode = .closing
            parser.append(bytes)
            serveHTTP(connection, parser, flush: &flush)
        case .websocket(var reader, let echo):
            connection.mode = .closing
            reader.append(bytes)
            readWebSocket(connection, reader, echo: echo, flush: &flush)
        case .closing:
            return
        }
    }

    /// The WELCOME deadline passed: a peer that has sent nothing is a line peer; one
    /// whose first line has begun is awaited.
    func greetIfSilent(_ connection: Connection, flush: inout FlushList) {
        guard case .detecting(let buffered) = connection.mode, buffered.isEmpty else { return }
        // Bytes already in the socket that this queue has not read yet: a browser's
        // request on a socket it opened early must not meet a WELCOME. Read first.
        if Sys.hasPendingBytes(connection.fd) { return }
        becomeLinePeer(connection, replaying: [], flush: &flush)
    }

    func becomeLinePeer(_ connection: Connection, replaying buffered: [UInt8], flush: inout FlushList) {
        connection.kind = .line
        if connection.overCapacity {
            connection.mode = .closing
            connection.shared.withLock { $0.closeAfterFlush = true }
            let limit = server.configuration.maxConnections
            flush.append(to: connection) { out, format in
                MessageEncoder.encode(.error(.serverFull, "the server has its \(limit) connections; try again later"), format: format, into: &out)
            }
            return
        }
        let name = connection.name  // no run token is out before the first command
        flush.append(to: connection) { out, format in
            MessageEncoder.encode(.welcome(session: connection.session, name: name), format: format, into: &out)
        }
        connection.framer = LineFramer(maxLineBytes: server.configuration.maxLineBytes)
        connection.mode = .line
        buffered.withUnsafeBufferPointer { frame($0, with: &connection.framer, on: connection, flush: &flush) }
    }

    private func frame(_ bytes: UnsafeBufferPointer<UInt8>, with framer: inout LineFramer, on connection: Connection, flush: inout FlushList) {
        let maxLine = framer.maxLineBytes
        let receivedAt = batchNanos
        framer.feed(bytes) { piece in
            switch piece {
            case .line(let line):
                // The press path: ids looked up straight from the bytes.
                if let scanned = FastLineParser.scanPress(line), let press = server.resolvePress(scanned),
                   admitPress(connection, at: receivedAt, down: press.verb == .down) {
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
        server.runner.run(jobs, for: connection, flush: &flush)
        jobs.removeAll(keepingCapacity: true)
    }

    // Presses of one round wait until its end, so that every connection's presses for a
    // panel enter its queue in one visit (each `queue.sync` costs a block allocation in
    // the Dispatch overlay). A connection's own order is kept: a press joins the deferred
    // ones only when nothing of its read came before it, and anything else a connection
    // sends runs the deferred presses first.

    /// Runs the presses deferred in this round, in one visit to their panel's queue.
    func runDeferredPresses(flush: inout FlushList) {
        guard let panel = deferredPanel else { return }
        server.runner.runPresses(deferred, on: server.panels[panel], flush: &flush)
        deferred.removeAll(keepingCapacity: true)
        deferredPanel = nil
    }

    /// `admit` for a resolved press: releases always pass; a DOWN over the limit is
    /// left to the general path, which answers it `rate-limited`.
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
        .failure(RequestError(.rateLimited, "over \(server.configuration.commandBurst) commands at once or \(server.configuration.commandsPerSecond) a second; this one was dropped",
                              format: format))
    }
}
