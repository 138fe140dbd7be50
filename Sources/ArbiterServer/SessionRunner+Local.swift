import ArbiterCore
import ArbiterIO
import ArbiterWire
import Dispatch

extension SessionRunner {
    /// Commands that belong to no panel, run on the reactor's queue.
    func runLocal(_ command: ParsedCommand, for connection: Connection, flush: inout FlushList) {
        var format = command.format
        let id = command.id
        func send(_ message: ServerMessage) {
            reply(message, format: format, id: id, to: connection, flush: &flush)
        }
        switch command.request {
        case .hello(let name, let key, let newFormat):
            let check = key.map { server.checkKey($0, peer: connection.peer) }
            if let (why, seconds) = check?.notChecked {
                return send(.error(.rateLimited, "\(why); no key is checked for \(seconds) s; nothing was changed"))
            }
            if case .wrong? = check {
                return send(.error(.forbidden, "that key matches no panel; nothing was changed"))
            }
            if newFormat == .text, connection.machine.kind == .websocket {
                return send(.error(.badSyntax, "format=text does not apply to a WebSocket, whose frames carry JSON; nothing was changed"))
            }
            // A name in use from another address is marked (alice-2): no impostors by name.
            let name = server.names.claim(name, for: connection.session, from: connection.address, replacing: connection.name)
            connection.name = name
            if let key { connection.key = key }
            if let newFormat {
                // The new form applies from this reply on (PROTOCOL.md section 3).
                format = newFormat
                connection.format = newFormat
                connection.withLock { connection.eventFormat = newFormat }
            }
            let best = server.panels.map { server.access(key: connection.key, on: $0.config) }.max() ?? .none
            send(.hello(name: name, session: connection.session, role: best.roleName))
        case .help(let topic?):
            // Validated by the parser: the topic is a verb.
            for syntax in CommandSyntax.all where syntax.verb.rawValue == topic {
                send(.helpLine("\(syntax.usage) - \(syntax.summary)"))
                send(.helpLine("JSON: \(syntax.jsonUsage)"))
            }
            send(.ok(verb: "HELP", panel: nil))
        case .help(nil):
            for syntax in CommandSyntax.all {
                send(.helpLine("\(syntax.usage) - \(syntax.summary)"))
            }
            send(.helpLine("JSON: a line starting with { is a JSON command, e.g. {\"cmd\":\"down\",\"panel\":\"demo\",\"button\":\"b1\"}"))
            send(.ok(verb: "HELP", panel: nil))
        case .panels:
            listPanels(format: format, id: id, to: connection, flush: &flush)
        case .ping(let token):
            send(.pong(token: token))
        case .quit:
            guard connection.machine.finish() else { return }
            // Commands relayed to another node still owe their replies, which come before
            // OK QUIT (replies keep the order of the commands): the goodbye waits for them.
            if connection.awaitsRelayedReplies {
                return SessionRunner.quitWhenAnswered(connection, format: format, id: id, attempt: 0)
            }
            SessionRunner.sayQuit(to: connection, format: format, id: id, flush: &flush)
        case .kick(let target):
            let isAdmin = server.panels.contains { server.access(key: connection.key, on: $0.config) == .admin }
            guard isAdmin else { return send(.error(.forbidden, "KICK needs an admin key")) }
            guard let victim = server.connection(target) else {
                if let cluster = server.cluster, cluster.kickElsewhere(target, by: connection, format: format, id: id) { return }
                return send(.error(.noSuchSession, "no session \(target) is connected"))
            }
            // The kicker needs the admin level on every panel the session joined or pressed in.
            if let other = server.kickRefusal(of: victim, key: connection.key) {
                return send(.error(.forbidden, "KICK \(target) needs the admin key of panel \(other.id)"))
            }
            send(.okKick(target))
            victim.reactor.requestClose(victim, reason: "kicked by \(connection.session)")
        case .join, .leave, .press, .history, .reset, .arm, .ranking:
            // Routed to their panel before they get here.
            send(.error(.badSyntax, "internal routing error"))
        }
    }

    /// `OK QUIT` and the close: a WebSocket ends with the close handshake (RFC 6455
    /// 5.5.1), not a bare FIN. On the reactor's queue.
    static func sayQuit(to connection: Connection, format: WireFormat, id: CommandID?, flush: inout FlushList) {
        guard connection.machine.kind == .websocket else {
            return flush.appendLast(to: connection) { out, _ in
                MessageEncoder.encode(.ok(verb: "QUIT", panel: nil), format: format, id: id, into: &out)
            }
        }
        flush.append(to: connection) { out, _ in MessageEncoder.encode(.ok(verb: "QUIT", panel: nil), format: format, id: id, into: &out) }
        flush.appendLast(to: connection, raw: true) { out, _ in
            out.append(contentsOf: WebSocketFrameEncoder.closeFrame(code: WebSocketCloseCode.normal, reason: "quit"))
        }
    }

    /// Says the goodbye once no relayed reply is owed (each is answered, or refused
    /// `ERROR unavailable` when its leader or link goes away), looking every 5 ms; after
    /// 15 s it says it anyway, and what was held goes out first.
    /// `PANELS`. In cluster mode a panel another node leads counts the members of every
    /// node, as its leader has them (`LeaderStateGather`): the answer then takes a reply
    /// slot, so it keeps its place among the session's answers. Each line ends with the
    /// panel's leader as this node saw it, in cluster mode only (`PanelLeader`).
    private func listPanels(format: WireFormat, id: CommandID?, to connection: Connection, flush: inout FlushList) {
        let panels = server.panels
        // This node's own count of each panel's members: its local members, or, for a panel
        // it leads, the members on every node (its core has them all).
        var counts = panels.map { $0.memberCount.load(ordering: .relaxed) }
        var questions: [LeaderStateGather.Question] = []
        var leaders = [PanelLeader](repeating: .singleNode, count: panels.count)
        if server.cluster != nil {
            for (index, host) in panels.enumerated() {
                guard let role = host.role else { continue }
                let seen = host.queue.sync { () -> (members: Int?, leader: String?, address: String?) in
                    leaders[index] = .cluster(role.leaderNode)
                    if role.decides { return (host.core.memberCount, nil, nil) }
                    guard let leader = role.leaderElsewhere else { return (nil, nil, nil) }
                    return (nil, leader.node, leader.address)
                }
                if let members = seen.members { counts[index] = members }
                if let leader = seen.leader { questions.append(.init(index: index, panel: host.config.id, leader: leader, address: seen.address)) }
            }
        }
        func encode(_ answers: [Int: [UInt8]], into out: inout [UInt8]) {
            for (index, host) in panels.enumerated() {
                let members = answers[index].flatMap(SessionRunner.members(inState:)) ?? counts[index]
                MessageEncoder.encode(
                    .panel(id: host.config.id, buttons: host.config.buttons.count, members: members, title: host.config.title, leader: leaders[index]),
                    format: format, id: id, into: &out)
            }
            MessageEncoder.encode(.okCount(verb: "PANELS", panel: nil, count: panels.count), format: format, id: id, into: &out)
        }
        guard !questions.isEmpty else {
            return flush.appendReply(to: connection) { out, _ in encode([:], into: &out) }
        }
        let slot = connection.reserveReplySlot()
        LeaderStateGather(reactor: connection.reactor, questions: questions) { answers in
            var flush = FlushList()
            flush.answer(slot, to: connection, panel: nil) { out, _ in encode(answers, into: &out) }
            flush.flushAll()
        }.start()
    }

    /// The member count in a leader's state (`PanelHost.stateJSON`).
    static func members(inState state: [UInt8]) -> Int? {
        guard case .number(let text)? = (try? JSONParser.parse(state))?["members"] else { return nil }
        return Int(text)
    }

    static func quitWhenAnswered(_ connection: Connection, format: WireFormat, id: CommandID?, attempt: Int) {
        let reactor = connection.reactor
        reactor.queue.asyncAfter(deadline: DispatchTime.now() + DispatchTimeInterval.milliseconds(5)) {
            guard reactor.holds(connection) else { return }
            if attempt < 3000, connection.awaitsRelayedReplies {
                return quitWhenAnswered(connection, format: format, id: id, attempt: attempt + 1)
            }
            var flush = FlushList()
            sayQuit(to: connection, format: format, id: id, flush: &flush)
            flush.flushAll()
        }
    }
}
