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
