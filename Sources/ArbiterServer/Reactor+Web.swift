import ArbiterCore
import ArbiterIO
import ArbiterWire

extension Reactor {
    /// Answers every complete request head buffered, in order (pipelining).
    func serveHTTP(_ connection: Connection, flush: inout FlushList) {
        for _ in 0..<100_000 {
            let head: HTTPRequestHead?
            do {
                head = try connection.machine.nextHTTPHead()
            } catch {
                server.metrics.add(.httpRequests)
                return finishHTTP(
                    connection,
                    HTTPResponse.serialize(
                        status: error.status, headers: [("Content-Type", "text/plain; charset=utf-8")],
                        body: Array("\(error)\n".utf8), keepAlive: false), flush: &flush)
            }
            guard let head else { break }
            server.metrics.add(.httpRequests)
            if let refusal = refusal(of: head) {
                return finishHTTP(connection, refusal, flush: &flush)
            }
            // Monitoring must see a full server: /healthz and /metrics are answered on
            // the reserve, once per connection.
            let monitoring = (head.path == "/healthz" || head.path == "/metrics") && connection.machine.admission != .pastReserve
            if connection.machine.admission != .served, monitoring {
                let response = HTTPRouter(server: server).response(to: head, keepAlive: false, peer: connection.peer)
                return finishHTTP(connection, response, flush: &flush)
            }
            if connection.machine.admission != .served {
                return finishHTTP(
                    connection,
                    HTTPResponse.serialize(
                        status: 503, headers: [("Content-Type", "text/plain; charset=utf-8"), ("Retry-After", "5")],
                        body: Array("the server is full; try again later\n".utf8), keepAlive: false), flush: &flush)
            }
            if head.path == "/ws", head.header("Upgrade") != nil {
                return upgrade(connection, head, flush: &flush)
            }
            // A chunked body cannot be skipped by this parser: answer, then close.
            let keepAlive = head.keepAlive && connection.machine.httpCanContinue
            if server.cluster != nil, head.path == "/api/panels", head.method == "GET" || head.method == "HEAD" {
                switch HTTPRouter(server: server).panels(head, keepAlive: keepAlive, peer: connection.peer, askLeaders: true) {
                case .now(let response):
                    if !keepAlive { return finishHTTP(connection, response, flush: &flush) }
                    flush.append(to: connection, raw: true) { out, _ in out.append(contentsOf: response) }
                    continue
                case .later(let entries):
                    // Later requests wait in the parser until this one is answered.
                    guard connection.machine.awaitAnswer() else { return }
                    return answerPanels(entries, on: connection, keepAlive: keepAlive, headOnly: head.method == "HEAD")
                }
            }
            let response = HTTPRouter(server: server).response(to: head, keepAlive: keepAlive, peer: connection.peer)
            if !keepAlive { return finishHTTP(connection, response, flush: &flush) }
            flush.append(to: connection, raw: true) { out, _ in out.append(contentsOf: response) }
        }
        connection.machine.httpHeadsAnswered(at: Instant(nanoseconds: batchNanos))
    }

    /// `GET /api/panels` with the panels other nodes lead as their leaders have them: the
    /// response is written once they answered (`LeaderStateGather`), in this request's
    /// place, and the requests that arrived behind it are served then.
    private func answerPanels(_ entries: [HTTPRouter.PanelEntry], on connection: Connection, keepAlive: Bool, headOnly: Bool) {
        var questions: [LeaderStateGather.Question] = []
        for (index, entry) in entries.enumerated() {
            guard case .leader(let leader, let address, let panel, _) = entry else { continue }
            questions.append(.init(index: index, panel: panel, leader: leader, address: address))
        }
        LeaderStateGather(reactor: self, questions: questions) { [self] answers in
            // Closed meanwhile (the peer hung up, the server is stopping): nothing to write.
            guard connection.machine.answerArrived() else { return }
            let objects = entries.enumerated().map { index, entry in
                guard case .leader(let leader, _, _, _) = entry, let answer = answers[index] else { return entry.localJSON }
                // The answer is the leader's `stateJSON`, which names no leader: it gets the
                // field as this node's own view of the panel did.
                return HTTPRouter.withLeader(leader, answer)
            }
            let response = HTTPRouter(server: server).panelsResponse(objects, keepAlive: keepAlive, headOnly: headOnly)
            var flush = FlushList()
            if keepAlive {
                flush.append(to: connection, raw: true) { out, _ in out.append(contentsOf: response) }
                serveHTTP(connection, flush: &flush)
            } else {
                finishHTTP(connection, response, flush: &flush)
            }
            flush.flushAll()
        }.start()
    }

    /// The response refusing a request whose `Host` or `Origin` is not this server's,
    /// or nil when it may be served.
    func refusal(of head: HTTPRequestHead) -> [UInt8]? {
        let status: Int
        let message: String
        switch server.hostPolicy.check(head) {
        case .allowed:
            return nil
        case .missingHost:
            (status, message) = (400, "an HTTP/1.1 request needs a Host header")
        case .duplicateHost:
            (status, message) = (400, "more than one Host header")
        case .foreignHost(let host):
            server.metrics.add(.hostRefused)
            (status, message) = (421, "this server does not answer to the host \(host); if it should, start it with --allow-host")
        case .foreignOrigin(let origin):
            server.metrics.add(.originRefused)
            (status, message) = (403, "WebSockets from pages of \(origin) are not accepted; if they should be, start the server with --allow-origin \(origin)")
        }
        return HTTPResponse.serialize(
            status: status, headers: [("Content-Type", "text/plain; charset=utf-8")],
            body: Array((message + "\n").utf8), keepAlive: false, headOnly: head.method == "HEAD")
    }

    /// Sends a last response and closes once it is written.
    func finishHTTP(_ connection: Connection, _ response: [UInt8], flush: inout FlushList) {
        guard connection.machine.finish() else { return }
        flush.appendLast(to: connection, raw: true) { out, _ in
            out.append(contentsOf: response)
        }
    }
}

extension Reactor {
    /// `GET /ws` with `Upgrade: websocket`: the handshake, the JSON welcome, and the
    /// JOIN of `?panel=` at once.
    func upgrade(_ connection: Connection, _ head: HTTPRequestHead, flush: inout FlushList) {
        let configuration = server.configuration
        let accept: String
        switch WebSocketHandshake.validate(head) {
        case .failure(let error):
            return finishHTTP(connection, error.response(keepAlive: false), flush: &flush)
        case .success(let value):
            accept = value
        }
        let echo = head.queryValue("echo") == "1"
        if echo, !configuration.webSocketEcho {
            return finishHTTP(
                connection,
                HTTPResponse.serialize(
                    status: 404, headers: [("Content-Type", "text/plain; charset=utf-8")],
                    body: Array("echo mode is off; start the server with --ws-echo\n".utf8), keepAlive: false), flush: &flush)
        }
        var jobs: [Job] = []
        let receivedAt = batchNanos
        // The session's fields belong to this queue, which also runs its commands: they
        // may be set here before the first command.
        if let name = head.queryValue("name") {
            if Identifier.isValidName(name) {
                connection.name = server.names.claim(name, for: connection.session, from: connection.address, replacing: connection.name)
            } else {
                jobs.append(.failure(RequestError(.badSyntax, "name must match [A-Za-z0-9_.-]{1,32}; you are \(connection.name)", format: .json)))
            }
        }
        if let panel = head.queryValue("panel") {
            if Identifier.isValidID(panel) {
                jobs.append(.command(ParsedCommand(request: .join(panel: panel), format: .json), receivedAt: receivedAt))
            } else {
                jobs.append(.failure(RequestError(.badSyntax, "panel id must match [A-Za-z0-9_-]{1,64}", format: .json)))
            }
        }
        connection.format = .json
        let name = connection.name
        flush.append(to: connection, raw: true) { out, _ in
            out.append(contentsOf: WebSocketHandshake.response(accept: accept))
        }
        connection.withLock {
            connection.framing = .websocket
            connection.eventFormat = .json
            // An echo of a 16 MiB message must not count as a slow reader.
            if echo { connection.outboundLimit = max(connection.outboundLimit, 2 * configuration.webSocketEchoMaxMessageBytes) }
        }
        server.metrics.add(.webSocketUpgrades)
        let maxMessage = echo ? configuration.webSocketEchoMaxMessageBytes : configuration.maxWebSocketMessageBytes
        let use: WebSocketUse = echo ? .echo : .commands
        guard connection.machine.upgrade(to: use, reader: WebSocketReader(maxPayload: maxMessage, maxMessage: maxMessage)) else { return }
        if !echo {
            flush.append(to: connection) { out, _ in
                MessageEncoder.encode(.welcome(session: connection.session, name: name), format: .json, into: &out)
            }
        }
        if !jobs.isEmpty { runner.run(jobs, for: connection, flush: &flush) }
        readWebSocket(connection, use: use, flush: &flush)
    }

    /// Decodes every complete message: JSON commands become jobs; control frames are
    /// answered here; any protocol error closes with its code.
    func readWebSocket(_ connection: Connection, use: WebSocketUse, flush: inout FlushList) {
        let echo = use == .echo
        var jobs: [Job] = []
        let receivedAt = batchNanos
        defer {
            if !jobs.isEmpty { runner.run(jobs, for: connection, flush: &flush) }
        }
        for _ in 0..<1_000_000 {
            let message: WebSocketMessage?
            do {
                message = try connection.machine.nextWebSocketMessage()
            } catch {
                return closeWebSocket(connection, code: error.closeCode, reason: "\(error)", flush: &flush)
            }
            guard let message else { break }
            switch message {
            case .text(let text):
                if echo {
                    flush.append(to: connection, raw: true) { out, _ in
                        WebSocketFrameEncoder.encode(opcode: .text, payload: Array(text.utf8), into: &out)
                    }
                    continue
                }
                var copy = text
                switch copy.withUTF8({ JSONCommandParser.parse($0) }) {
                case .command(let command):
                    jobs.append(admit(command.request, connection, at: receivedAt) ? .command(command, receivedAt: receivedAt) : rateLimited(.json))
                case .failure(let error): jobs.append(.failure(error))
                case .empty: break
                }
            case .binary(let bytes):
                guard echo else {
                    return closeWebSocket(
                        connection, code: WebSocketError.unsupportedData.closeCode,
                        reason: "binary frames are not accepted; send JSON text", flush: &flush)
                }
                flush.append(to: connection, raw: true) { out, _ in
                    WebSocketFrameEncoder.encode(opcode: .binary, payload: bytes, into: &out)
                }
            case .ping(let payload):
                flush.append(to: connection, raw: true) { out, _ in
                    out.append(contentsOf: WebSocketFrameEncoder.pongFrame(payload))
                }
            case .pong:
                // Any bytes answered the ping (`bytesArrived`).
                break
            case .close(let code, _):
                // Echo the peer's code (1000 when it gave none) and close once sent.
                return closeWebSocket(connection, code: code ?? 1000, reason: "", flush: &flush)
            }
        }
    }

    /// Sends a close frame as the last output and closes the socket after it.
    func closeWebSocket(_ connection: Connection, code: UInt16, reason: String, flush: inout FlushList) {
        guard connection.machine.finish() else { return }
        flush.appendLast(to: connection, raw: true) { out, _ in
            out.append(contentsOf: WebSocketFrameEncoder.closeFrame(code: code, reason: reason))
        }
    }
}
