import ArbiterCore
import ArbiterIO
import ArbiterWire

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
