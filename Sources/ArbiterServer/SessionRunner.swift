import ArbiterCore
import ArbiterIO
import ArbiterWire
import Dispatch

/// Runs a connection's commands in arrival order, on its reactor's queue.
///
/// A panel's core belongs to the panel's serial queue, and a command for it runs *in*
/// that queue, entered synchronously (`queue.sync`): the reactor's thread does the work
/// while holding the queue, so there is no thread hand-off per command, the panel's
/// decisions stay one total order, and two reactors only wait for each other while a
/// decision is being taken. Consecutive commands of one read for the same panel enter
/// its queue once. Replies keep command order, and a reply precedes the events its
/// command causes, because both are appended in that order inside the queue.
struct SessionRunner {
    /// The server owns the reactors that own runners: `unowned` back (checked).
    unowned let server: ServerState

    func run(_ jobs: [Job], for connection: Connection, flush: inout FlushList) {
        connection.reactor.assertOnQueue()
        var i = 0
        while i < jobs.count {
            switch jobs[i] {
            case .press(let first, _):
                let host = server.panels[first.panel]
                connection.touch(host.index)
                var end = i + 1
                while end < jobs.count, case .press(let next, _) = jobs[end], next.panel == first.panel { end += 1 }
                let presses = jobs[i..<end].lazy.compactMap { job -> (Connection, Press<Int>, receivedAt: Int64)? in
                    if case .press(let p, let at) = job { (connection, p, at) } else { nil }
                }
                i = end
                runPresses(presses, on: host, flush: &flush)
            case .failure(let error):
                i += 1
                if !connection.machine.runsCommands { continue }
                let format = error.format == .json ? .json : connection.format
                reply(.error(error.code, error.message), format: format, id: error.id, to: connection, flush: &flush)
            case .command(let command, _):
                guard let panelID = command.request.panel else {
                    i += 1
                    if let command = admissible(command, for: connection, flush: &flush) {
                        server.metrics.add(.localCommands)
                        runLocal(command, for: connection, flush: &flush)
                    }
                    continue
                }
                guard let host = server.panelsByID[panelID] else {
                    i += 1
                    if let command = admissible(command, for: connection, flush: &flush) {
                        reply(
                            .error(.noSuchPanel, "no panel \(panelID); PANELS lists them"), format: command.format,
                            id: command.id, to: connection, flush: &flush)
                    }
                    continue
                }
                connection.touch(host.index)
                // This command and the ones right after it for the same panel: one visit.
                var end = i + 1
                while end < jobs.count, case .command(let next, _) = jobs[end], next.request.panel == panelID { end += 1 }
                let first = i
                i = end
                visit(host) {
                    var readAt: Int64?
                    for k in first..<end {
                        guard case .command(let command, let receivedAt) = jobs[k],
                            let command = admissible(command, for: connection, flush: &flush)
                        else { continue }
                        readAt = receivedAt
                        host.execute(command, receivedAt: receivedAt, from: connection, flush: &flush)
                    }
                    host.endVisit(commandsReadAt: readAt, count: end - first)
                }
            }
        }
    }

    /// Presses (of one or several connections) for one panel, in one visit to its queue.
    func runPresses(_ presses: some Collection<(Connection, Press<Int>, receivedAt: Int64)>, on host: PanelHost, flush: inout FlushList) {
        visit(host) {
            // Read once per visit (inside the queue, so no press can follow the shutdown's
            // release of this panel): a read through the checked `unowned` reference costs
            // a retain and a release.
            let shuttingDown = server.isShuttingDown
            var readAt: Int64?
            for (connection, press, receivedAt) in presses where connection.machine.runsCommands {
                if shuttingDown {
                    reply(
                        .error(.shuttingDown, "the server is shutting down; nothing was done"), format: connection.format, id: nil,
                        to: connection, flush: &flush)
                    continue
                }
                readAt = receivedAt
                host.executePress(press, receivedAt: receivedAt, format: connection.format, from: connection, flush: &flush)
            }
            host.endVisit(commandsReadAt: readAt, count: presses.count)
        }
    }

    /// Runs `body` in the panel's queue; in cluster mode its role's way (`PanelRole.visit`).
    @inline(__always)
    private func visit(_ host: PanelHost, _ body: () -> Void) {
        guard let role = host.role else { return host.queue.sync(execute: body) }
        role.visit(body)
    }

    /// The command as it is to be answered, or nil when it must not run (after QUIT,
    /// or during a shutdown, which it is told).
    private func admissible(_ command: ParsedCommand, for connection: Connection, flush: inout FlushList) -> ParsedCommand? {
        if !connection.machine.runsCommands { return nil }
        var command = command
        // A JSON command is answered in JSON; a text one in the connection's form.
        if command.format == .text { command.format = connection.format }
        if server.isShuttingDown {
            reply(
                .error(.shuttingDown, "the server is shutting down; nothing was done"), format: command.format,
                id: command.id, to: connection, flush: &flush)
            return nil
        }
        return command
    }

    /// The connection is gone: release what it owns in every panel it touched.
    func disconnect(_ connection: Connection, flush: inout FlushList) {
        connection.reactor.assertOnQueue()
        for p in connection.touchedPanels {
            let host = server.panels[p]
            host.queue.sync {
                host.disconnect(connection, flush: &flush)
                host.endVisit()
            }
        }
        connection.touchedPanels = []
    }

    func reply(_ message: ServerMessage, format: WireFormat, id: CommandID?, to connection: Connection, flush: inout FlushList) {
        flush.appendReply(to: connection) { out, _ in
            MessageEncoder.encode(message, format: format, id: id, into: &out)
        }
    }
}
