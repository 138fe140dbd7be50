import ArbiterCore
import ArbiterWire

/// Runs each connection's jobs in order, one at a time, wherever they must run.
///
/// A connection has one run token (`Connection.Shared.busy`). Whoever holds it runs
/// the jobs: commands for a panel on that panel's queue (the token travels there with
/// the rest of the jobs), everything else right where the token is. That is why
/// replies come in command order and a reply precedes the events its command causes,
/// without any lock around a panel.
struct SessionRunner {
    unowned(unsafe) let server: ServerState

    /// Jobs most recently decoded: run now if the token is free, else queue behind.
    func submit(_ jobs: [Job], for connection: Connection, on here: Executor, flush: inout FlushList) {
        let limit = server.configuration.maxQueuedCommands
        let start = connection.shared.withLock { s -> Bool in
            if s.busy {
                s.inbox.append(contentsOf: jobs)
                if s.inbox.count > limit, !s.readPaused {
                    // A peer sending faster than its commands run stops being read
                    // until they are: memory stays bounded and the order kept.
                    s.readPaused = true
                    Connection.updateInterest(s, fd: connection.fd, epfd: connection.reactor.epfd, data: connection.epollData)
                }
                return false
            }
            s.busy = true
            return true
        }
        if start { run(connection, jobs, on: here, flush: &flush) }
    }

    /// The connection is closed: drop what is queued and release what it owns.
    func enqueueDisconnect(_ connection: Connection, on here: Executor, flush: inout FlushList) {
        let start = connection.shared.withLock { s -> Bool in
            s.inbox = [.disconnect]
            if s.busy { return false }
            s.busy = true
            return true
        }
        if start { run(connection, [], on: here, flush: &flush) }
    }

    /// Runs jobs with the token held, until none are left or they must move to a panel.
    func run(_ connection: Connection, _ first: [Job], on here: Executor, flush: inout FlushList) {
        var jobs = first
        var i = 0
        var budget = 512
        while true {
            while i < jobs.count {
                budget -= 1
                if budget == 0 {
                    // Let other connections on this queue have a turn.
                    return handOff(connection, Array(jobs[i...]), to: here)
                }
                switch jobs[i] {
                case .disconnect:
                    guard let p = connection.touchedPanels.last else {
                        i += 1
                        continue
                    }
                    let host = server.panels[p]
                    guard here.isPanel(host) else { return host.submit(connection, Array(jobs[i...])) }
                    host.disconnect(connection, flush: &flush)
                    connection.touchedPanels.removeLast()
                case .failure(let error):
                    i += 1
                    if connection.stopsRunning { continue }
                    let format = error.format == .json ? .json : connection.format
                    reply(.error(error.code, error.message), format: format, id: error.id, to: connection, flush: &flush)
                case .command(var command, let receivedAt):
                    // A JSON command is answered in JSON; a text one in the connection's form.
                    if command.format == .text { command.format = connection.format }
                    if server.isShuttingDown {
                        i += 1
                        reply(.error(.shuttingDown, "the server is shutting down; nothing was done"), format: command.format,
                              id: command.id, to: connection, flush: &flush)
                        continue
                    }
                    if connection.stopsRunning {
                        i += 1
                        continue
                    }
                    if let panelID = command.request.panel {
                        guard let host = server.panelsByID[panelID] else {
                            i += 1
                            reply(.error(.noSuchPanel, "no panel \(panelID); PANELS lists them"), format: command.format, id: command.id,
                                  to: connection, flush: &flush)
                            continue
                        }
                        guard here.isPanel(host) else {
                            if !connection.touchedPanels.contains(host.index) { connection.touchedPanels.append(host.index) }
                            return host.submit(connection, Array(jobs[i...]))
                        }
                        i += 1
                        host.execute(command, receivedAt: receivedAt, from: connection, flush: &flush)
                    } else {
                        i += 1
                        server.metrics.add(.localCommands)
                        runLocal(command, for: connection, flush: &flush)
                    }
                }
            }
            // Out of jobs: take those that arrived meanwhile, or give the token back.
            let more = connection.shared.withLock { s -> [Job]? in
                if s.inbox.isEmpty {
                    s.busy = false
                    return nil
                }
                let taken = s.inbox
                s.inbox = []
                if s.readPaused {
                    s.readPaused = false
                    if !s.closed {
                        Connection.updateInterest(s, fd: connection.fd, epfd: connection.reactor.epfd, data: connection.epollData)
                    }
                }
                return taken
            }
            guard let more else { return }
            jobs = more
            i = 0
        }
    }

    private func handOff(_ connection: Connection, _ jobs: [Job], to here: Executor) {
        switch here {
        case .panel(let host):
            host.submit(connection, jobs)
        case .reactor(let reactor):
            reactor.queue.async {
                var flush = FlushList()
                self.run(connection, jobs, on: here, flush: &flush)
                flush.flushAll()
            }
        }
    }

    func reply(_ message: ServerMessage, format: WireFormat, id: CommandID?, to connection: Connection, flush: inout FlushList) {
        flush.append(to: connection) { out, _ in
            MessageEncoder.encode(message, format: format, id: id, into: &out)
        }
    }
}
