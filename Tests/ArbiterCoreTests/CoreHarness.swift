@testable import ArbiterCore

/// Drives one `PanelCore` with a manual clock and renders its output compactly, so a
/// test reads like the wire: `GRANTED b1 fence=1`, `PRESSED b1 alice s1 fence=1 #1`.
struct CoreHarness {
    var core: PanelCore
    var now = Instant(milliseconds: 1_000)
    var log: [String] = []

    init(_ config: PanelConfig = .demo, lastFence: UInt64 = 0) {
        core = PanelCore(config: config, lastFence: lastFence)
    }

    /// Runs one command and returns its rendered output (also appended to `log`).
    @discardableResult
    mutating func send(
        _ request: PanelRequest, _ session: Int, _ name: String? = nil, access: Access = .admin, arrival: Instant? = nil, address: String = ""
    ) -> [String] {
        var out = PanelOutput()
        core.handle(
            request, session: SessionID(session), name: name ?? "u\(session)", access: access, now: now, arrival: arrival, address: address,
            into: &out)
        return record(out)
    }

    /// A DOWN read now whose bytes arrived `agoUs` microseconds earlier (the kernel's
    /// stamp), from `name` at `address`.
    @discardableResult
    mutating func down(_ b: String, _ session: Int, arrivedUsAgo agoUs: Int64, name: String? = nil, address: String = "") -> [String] {
        let arrival = Instant(nanoseconds: now.nanoseconds - agoUs * 1000)
        return send(press(.down(panel: b, button: b)), session, name, arrival: arrival, address: address)
    }

    /// Moves the clock by microseconds without any timer firing.
    mutating func skipMicros(_ us: Int64) {
        now = Instant(nanoseconds: now.nanoseconds + us * 1000)
    }

    @discardableResult
    mutating func down(_ b: String, _ session: Int, access: Access = .admin) -> [String] {
        send(press(.down(panel: b, button: b)), session, access: access)
    }

    @discardableResult
    mutating func up(_ b: String, _ session: Int, fence: UInt64? = nil, access: Access = .admin) -> [String] {
        send(press(.up(panel: b, button: b, fence: fence)), session, access: access)
    }

    @discardableResult
    mutating func cancel(_ b: String, _ session: Int, fence: UInt64? = nil) -> [String] {
        send(press(.cancel(panel: b, button: b, fence: fence)), session)
    }

    /// A press naming its button by id, looked up as the server does.
    func press(_ named: Press<String>) -> PanelRequest {
        core.config.request(for: named)
    }

    /// Moves the clock and delivers the timer wake-up, as the server's timer would.
    @discardableResult
    mutating func wait(_ ms: Int64) -> [String] {
        now = now + ms
        var out = PanelOutput()
        core.advance(to: now, into: &out)
        return record(out)
    }

    /// Moves the clock by nanoseconds and delivers the timer wake-up.
    @discardableResult
    mutating func waitNanos(_ ns: Int64) -> [String] {
        now = Instant(nanoseconds: now.nanoseconds + ns)
        var out = PanelOutput()
        core.advance(to: now, into: &out)
        return record(out)
    }

    @discardableResult
    mutating func arm(_ group: String, _ session: Int = 99, access: Access = .admin) -> [String] {
        send(.arm(group: group), session, access: access)
    }

    @discardableResult
    mutating func leave(_ session: Int) -> [String] {
        send(.leave, session)
    }

    /// Moves the clock without any timer firing (a late tick).
    mutating func skip(_ ms: Int64) {
        now = now + ms
    }

    /// Fires the timer at every deadline the core asks for until `ms` have passed.
    @discardableResult
    mutating func runTimers(for ms: Int64) -> [String] {
        let end = now + ms
        var lines: [String] = []
        for _ in 0..<100_000 {
            guard let d = core.nextDeadline, d <= end else { break }
            if d > now { now = d }
            var out = PanelOutput()
            core.advance(to: now, into: &out)
            lines += record(out)
        }
        now = end
        return lines
    }

    @discardableResult
    mutating func disconnect(_ session: Int) -> [String] {
        var out = PanelOutput()
        core.disconnect(session: SessionID(session), now: now, into: &out)
        return record(out)
    }

    private mutating func record(_ out: PanelOutput) -> [String] {
        var lines = out.items.map { render($0) }
        if out.replyDeferred { lines.insert("(reply deferred)", at: 0) }
        log += lines
        return lines
    }

    func render(_ item: PanelOutput.Item) -> String {
        switch item {
        case .reply(let r): render(r)
        case .event(let e): render(e)
        case .notice(let s, let r): "to \(s): " + render(r)
        case .answer(let s, let r): "answer \(s): " + render(r)
        }
    }

    func id(_ b: Int) -> String { core.config.buttons[b].id }

    func render(_ r: PanelReply) -> String {
        switch r {
        case .granted(let b, let f): "GRANTED \(id(b)) fence=\(f)"
        case .deniedBusy(let b, let o, _, let a): "DENIED \(id(b)) busy owner=\(o) active=\(id(a))"
        case .deniedForbidden(let b): "DENIED \(b) forbidden"
        case .released(let v, let b, let e): "OK \(v.rawValue) \(id(b))" + (e.map { " ended=\($0.rawValue)" } ?? "")
        case .joined(let s): "OK JOIN members=\(s.members) fence=\(s.fence) seq=\(s.seq)" + (s.joiner.map { " joiner=\($0.name)" } ?? "")
        case .left: "OK LEAVE"
        case .reset: "OK RESET"
        case .error(let c, _): "ERROR \(c.rawValue)"
        case .queued(let b, let p, let o): "QUEUED \(id(b)) position=\(p) owner=\(o)"
        case .ranked(let b, let r, let a): "RANKED \(id(b)) rank=\(r) after_us=\(a)"
        case .denied(let b, let r): "DENIED \(id(b)) \(r.rawValue)"
        case .armed(let g): "OK ARM \(g)"
        case .ranking(let g, let round, let ranking):
            "RANKING \(g) \(round.rawValue) " + ranking.map { "\($0.rank):\($0.name)+\($0.afterMicroseconds)" }.joined(separator: ",")
        }
    }

    func render(_ e: PanelEvent) -> String {
        func o(_ o: Owner) -> String { "\(o.name) \(o.session) fence=\(o.fence)" }
        let body: String
        switch e.kind {
        case .pressed(let b, let w): body = "PRESSED \(id(b)) \(o(w))"
        case .fired(let b, let w): body = "FIRED \(id(b)) \(o(w))"
        case .progress(let b, let p): body = "PROGRESS \(id(b)) \(p)"
        case .midway(let b): body = "MIDWAY \(id(b))"
        case .tapped(let b, let w): body = "TAPPED \(id(b)) \(o(w))"
        case .started(let b, let w): body = "STARTED \(id(b)) \(o(w))"
        case .stopped(let b, let w, let h, let d, let r): body = "STOPPED \(id(b)) \(o(w)) held=\(h) discarded=\(d) \(r.rawValue)"
        case .cancelled(let b, let w): body = "CANCELLED \(id(b)) \(o(w))"
        case .released(let b, let r, let w): body = "RELEASED \(id(b)) \(r.rawValue) \(w.name) fence=\(w.fence)"
        case .joined(let n, let s): body = "JOINED \(n) \(s)"
        case .left(let n, let s): body = "LEFT \(n) \(s)"
        case .presence(let m, let j, let l): body = "PRESENCE members=\(m) joined=\(j) left=\(l)"
        case .queued(let b, let n, let s, let p): body = "QUEUED \(id(b)) \(n) \(s) position=\(p)"
        case .dequeued(let b, let n, let s, let p, let r): body = "DEQUEUED \(id(b)) \(n) \(s) position=\(p) \(r.rawValue)"
        case .armed(let g): body = "ARMED \(g)"
        case .buzzed(let r): body = "BUZZED \(id(r.button)) \(r.name) \(r.session) rank=\(r.rank) after_us=\(r.afterMicroseconds)"
        case .closed(let g): body = "CLOSED \(g)"
        }
        return body + " #\(e.seq)"
    }
}

extension PanelConfig {
    /// A panel with short timings for tests.
    static func testPanel(
        tapTimeout: Int64 = 10_000, holdMs: Int64 = 3000, progressMs: Int64 = 100,
        longMs: Int64 = 350, minTalkMs: Int64 = 300, talkTimeout: Int64 = 60_000
    ) -> PanelConfig {
        PanelConfig(
            id: "t",
            buttons: [
                ButtonConfig(id: "b1", kind: .tap, timeoutMs: tapTimeout),
                ButtonConfig(id: "b2", kind: .tap, timeoutMs: tapTimeout),
                ButtonConfig(id: "sos", kind: .hold, group: "emergency", holdMs: holdMs, progressMs: progressMs),
                ButtonConfig(id: "talk", kind: .talk, group: "talk", timeoutMs: talkTimeout, longMs: longMs, minTalkMs: minTalkMs),
            ])
    }
}

extension PanelConfig {
    /// The server's look-up of a press's button id, for tests that name buttons by id.
    func request(for press: Press<String>) -> PanelRequest {
        guard let b = buttons.firstIndex(where: { $0.id == press.button }) else { return .unknownButton(press.verb, id: press.button) }
        return .press(press.resolved(panel: 0, button: b))
    }
}
