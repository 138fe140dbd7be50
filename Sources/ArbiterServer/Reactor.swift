import ArbiterCore
import ArbiterIO
import ArbiterWire
import Dispatch

/// The server's policy over ArbiterIO's `EventLoop`, for a share of the connections.
///
/// The loop (ArbiterIO) owns epoll, accepting, reading, the output and its flushing,
/// closing and the sweep for missed wake-ups; it calls the hooks overridden here, which
/// decide what the bytes are (each connection's `ConnectionStateMachine`), run the
/// commands, keep the WELCOME deadlines and say what a close releases. Everything not
/// marked otherwise is owned by `queue`. Hot properties are `@exclusivity(unchecked)`:
/// only `queue` touches them.
package final class Reactor: EventLoop, @unchecked Sendable {
    /// The server owns its reactors; this way back is `unowned` (checked, not `unsafe`).
    unowned let server: ServerState
    /// Runs the commands of this reactor's connections.
    let runner: SessionRunner
    private var timer: DispatchSourceTimer?
    @exclusivity(unchecked) private var timerDeadline: Instant?
    /// Connections waiting for their WELCOME deadline, in accept order.
    @exclusivity(unchecked) private var greetings: [(deadline: Instant, connection: Connection)] = []
    @exclusivity(unchecked) private var greetingsHead = 0
    /// Commands decoded from one read, reused so a read allocates nothing.
    @exclusivity(unchecked) var jobs: [Job] = []
    /// Press commands of this round waiting for one visit to their panel.
    @exclusivity(unchecked) var deferred: [(Connection, Press<Int>, receivedAt: Int64)] = []
    @exclusivity(unchecked) var deferredPanel: Int?

    /// The server's cluster context, held here: asked at every write in cluster mode
    /// (`outputStands`), and read through `server` each time it cost a strong retain of
    /// the server and of the context (whose weak references make each of its retains the
    /// runtime's slow path): about 500 instructions per write on a leader's node.
    private let cluster: (any ServerCluster)?

    init(index: Int, server: ServerState) throws(Sys.Failure) {
        self.server = server
        self.cluster = server.cluster
        self.runner = SessionRunner(server: server)
        try super.init(
            index: index, label: "arbiter.reactor.\(index)", sendBufferBytes: server.configuration.socketSendBufferBytes,
            idleSpinNs: server.configuration.idleSpinNs, stampsArrivals: server.stampsArrivals, readWatermark: server.readWatermark)
    }

    package override func start() {
        super.start()
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [unowned self] in self.timerFired() }
        timer.resume()
        self.timer = timer
    }

    /// Stops watching; called on `queue` during shutdown.
    package override func stop() {
        assertOnQueue()
        timer?.cancel()
        timer = nil
        super.stop()
        // Connections point at their reactor; drop every reference back to them.
        greetings.removeAll()
        greetingsHead = 0
    }

    /// The WELCOME timer and the sweep, at the clock's time. On `queue`.
    func tickForTesting() {
        assertOnQueue()
        timerFired()
        sweep()
        closeRequested()
    }

    /// The last words of a shutdown: line peers get `OK BYE reason=shutdown`, WebSockets
    /// a close 1001; each closes once that is written. Others close now. On `queue`.
    func sayGoodbye() {
        assertOnQueue()
        var flush = FlushList()
        for case let channel? in slots {
            let connection = unsafeDowncast(channel, to: Connection.self)
            perform(connection.machine.shutdown(), nil, on: connection, flush: &flush)
        }
        flush.flushAll()
    }

    var connectionCount: Int { channelCount }

    // MARK: The loop's hooks

    package override func accepted(fd: Int32, peer: String) {
        server.adopt(fd: fd, peer: peer)
    }

    package override func batchTime(givenSystem nanoseconds: Int64) -> Int64 {
        server.clock.reading(givenMonotonic: nanoseconds)
    }

    package override func received(_ bytes: UnsafeBufferPointer<UInt8>, on channel: Channel, flush: inout FlushList) {
        received(bytes, on: unsafeDowncast(channel, to: Connection.self), flush: &flush)
    }

    /// Cluster mode: output a decision made holds only under the lease it was made
    /// under (the epoch counts the node's lapses).
    package override func outputStands(epoch: UInt64, markedAtMs: Int64) -> Bool {
        cluster?.outputStands(epoch, markedAtMs: markedAtMs) ?? true
    }

    package override var staleOutputReason: String {
        "output made before this node's lease lapsed (a pause or a stall) was dropped unsent: the client reconnects to the truth"
    }

    package override func batchEnded(flush: inout FlushList) {
        runDeferredPresses(flush: &flush)
    }

    package override func closing(_ channel: Channel) -> Bool {
        // A press read before the close must not be granted after its release.
        var pending = FlushList()
        runDeferredPresses(flush: &pending)
        pending.flushAll()
        return unsafeDowncast(channel, to: Connection.self).machine.socketClosed()
    }

    package override func closed(_ channel: Channel, reason: String) {
        let connection = unsafeDowncast(channel, to: Connection.self)
        server.connectionClosed(connection, reason: reason)
        var flush = FlushList()
        runner.disconnect(connection, flush: &flush)
        flush.flushAll()
    }

    package override func registered(_ channel: Channel) {
        let connection = unsafeDowncast(channel, to: Connection.self)
        greetings.append((connection.acceptedAt + server.configuration.welcomeDelayMs, connection))
        // Embedded (tests): the deadline is run by `tickForTesting`.
        if connection.sink == nil { scheduleTimer() }
    }

    /// Heads that take too long, silent WebSockets to ping or drop.
    /// In cluster mode also replies owed far too long (`Connection.giveUpOverdueReplies`).
    package override func swept() {
        let now = server.clock.now()
        var flush = FlushList()
        let owedLimit = server.cluster?.owedReplyLimitMs
        for case let channel? in slots {
            let connection = unsafeDowncast(channel, to: Connection.self)
            perform(connection.machine.sweep(now: now, lastReadAt: connection.lastReadAt), nil, on: connection, flush: &flush)
            if let owedLimit {
                let given = flush.giveUpOverdueReplies(of: connection, at: now.milliseconds, limitMs: owedLimit)
                if given > 0 {
                    server.log.warning(
                        "replies owed too long were answered ERROR unavailable (a path lost them)",
                        ["session": connection.session.description, "count": "\(given)", "ms": "\(owedLimit)"])
                }
            }
        }
        flush.flushAll()
    }

    package override func trouble(_ event: LoopTrouble) {
        switch event {
        case .acceptFailed(let e):
            server.log.warning("accept failed; pausing accepts for 100 ms", ["errno": "\(e)"])
        case .registrationFailed(let e):
            server.log.warning("epoll_ctl failed", ["errno": "\(e)"])
        case .missedWakeup:
            server.log.warning("ready sockets found by the sweep: the reactor's wake-up was missed", ["reactor": "\(index)"])
            server.metrics.add(.missedWakeups)
        }
    }

    /// Gives a relay link's socket to the relay network (the machine chose `handOff`):
    /// the descriptor leaves epoll and the table but stays open, and the connection
    /// stops counting as a client. Nothing was written to it. On `queue`.
    func handOff(_ connection: Connection, firstBytes: [UInt8]) {
        assertOnQueue()
        guard let adopt = server.configuration.relayHandOff else { return }
        detach(connection)
        server.registry.withLock { _ = $0.removeValue(forKey: connection.session) }
        server.names.release(connection.name, of: connection.session)
        server.metrics.add(.connectionsClosed)
        server.log.info("connection handed to the relay", ["session": connection.session.description, "peer": connection.peer])
        adopt(connection.fd, connection.peer, firstBytes)
    }

    // MARK: Timers

    private func timerFired() {
        assertOnQueue()
        let now = server.clock.now()
        var flush = FlushList()
        while greetingsHead < greetings.count, greetings[greetingsHead].deadline <= now {
            let connection = greetings[greetingsHead].connection
            greetingsHead += 1
            greetIfSilent(connection, flush: &flush)
        }
        if greetingsHead == greetings.count {
            greetings.removeAll(keepingCapacity: greetings.count < 1024)
            greetingsHead = 0
        }
        flush.flushAll()
        timerDeadline = nil
        scheduleTimer()
    }

    private func scheduleTimer() {
        guard greetingsHead < greetings.count else { return }
        let deadline = greetings[greetingsHead].deadline
        if let current = timerDeadline, current <= deadline { return }
        timerDeadline = deadline
        timer?.schedule(
            deadline: .now() + .milliseconds(Int(max(0, deadline.since(server.clock.now())))),
            leeway: .milliseconds(5))
    }
}

extension Reactor {
    /// Bytes arrived: the state machine says what they are for.
    func received(_ bytes: UnsafeBufferPointer<UInt8>, on connection: Connection, flush: inout FlushList) {
        assertOnQueue()
        let now = Instant(nanoseconds: batchNanos)
        connection.lastReadAt = now
        connection.arrivedAt = arrivalNanos
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
