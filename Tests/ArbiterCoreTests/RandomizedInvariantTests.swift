import Testing
@testable import ArbiterCore

/// Random commands from several sessions, with on-time, late and missing timer ticks,
/// checked against the arbiter's invariants after every step.
@Suite("randomized invariants")
struct RandomizedInvariantTests {
    struct SplitMix64: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func invariantsHold(seed: UInt64) {
        run(seed: seed, config: .testPanel(tapTimeout: 700, holdMs: 600, progressMs: 70, longMs: 150, minTalkMs: 100, talkTimeout: 900))
    }

    /// The same with a queue group, a buzzer group and an exclusive one side by side.
    @Test(arguments: [11, 12, 13, 14, 15, 16, 17, 18] as [UInt64])
    func invariantsHoldWithFairGroups(seed: UInt64) {
        run(seed: seed, config: .fairPanel(maxQueue: 2, lockoutMs: 300, holdMs: 600, tapTimeout: 700))
    }

    func run(seed: UInt64, config: PanelConfig) {
        var rng = SplitMix64(state: seed)
        var core = PanelCore(config: config)
        var now = Instant(milliseconds: 0)
        var checker = InvariantChecker(config: config)
        let buttons = config.buttons.map(\.id)
        for _ in 0..<4000 {
            var out = PanelOutput()
            let session = SessionID(Int.random(in: 1...4, using: &rng))
            let button = buttons.randomElement(using: &rng)!
            var request: PanelRequest?
            switch Int.random(in: 0..<100, using: &rng) {
            case 0..<30: request = config.request(for: .down(panel: "p", button: button))
            case 30..<55:
                let fence = Bool.random(using: &rng) ? nil : UInt64.random(in: 0...core.lastFence + 1, using: &rng)
                request = config.request(for: .up(panel: "p", button: button, fence: fence))
            case 55..<62: request = config.request(for: .cancel(panel: "p", button: button))
            case 62..<66: request = .join
            case 66..<68: request = .leave
            case 68..<69: request = .reset
            case 69..<72 where !config.groups.isEmpty: request = .arm(group: "quiz")
            case 69..<72: core.disconnect(session: session, now: now, into: &out)
            case 72..<86: now = now + Int64.random(in: 0...400, using: &rng)  // late: no tick
            default:
                if let d = core.nextDeadline { now = max(now, d) }
                core.advance(to: now, into: &out)
            }
            if let request {
                core.handle(request, session: session, name: "u\(session.number)", access: .admin, now: now, into: &out)
            }
            checker.check(out, request: request, session: session)
        }
        var out = PanelOutput()
        for s in 1...4 { core.disconnect(session: SessionID(s), now: now, into: &out) }
        checker.check(out, request: nil, session: SessionID(0))
        #expect(checker.violations == [])
        #expect(checker.waiting.values.allSatisfy { $0.isEmpty }, "every queued press is granted or leaves")
        #expect(core.queues.allSatisfy { $0.isEmpty })
        #expect(checker.open.isEmpty, "every PRESSED is closed by exactly one RELEASED")
        #expect(checker.grants > 100)
        #expect(checker.fires > 10)
    }
}

/// The safety rules of PROTOCOL.md 4-6 over a stream of outputs.
struct InvariantChecker {
    let config: PanelConfig
    var violations: [String] = []
    var lastSeq: UInt64 = 0
    var lastFence: UInt64 = 0
    /// group -> (button, fence) of the live grant, as the events tell it.
    var open: [String: (button: Int, fence: UInt64)] = [:]
    var firedFences: Set<UInt64> = []
    var grants = 0
    var fires = 0
    /// The last few events, to check the hold completion is contiguous.
    var pendingCompletion: [String] = []
    /// Queue groups: who waits, as the events tell it.
    var waiting: [String: [SessionID]] = [:]
    /// A hand-off announced to its session, awaiting its PRESSED.
    var pendingHandOff: (session: SessionID, fence: UInt64)?
    /// Buzzer groups: the round as the events tell it, and the last rank and after_us.
    var round: [String: RoundState] = [:]
    var lastRank: [String: (rank: Int, after: Int64)] = [:]

    init(config: PanelConfig) { self.config = config }

    mutating func check(_ out: PanelOutput, request: PanelRequest?, session: SessionID) {
        var upByOwner = false
        for item in out.items {
            switch item {
            case .reply(.released(.up, _, nil)): upByOwner = true
            case .reply: continue
            case .notice(let s, .granted(_, let fence)): pendingHandOff = (s, fence)
            case .notice(_, let r): violations.append("unexpected notice \(r)")
            case .answer(_, let r): violations.append("unexpected answer \(r)")
            case .event(let e): see(e, upByOwner: upByOwner)
            }
        }
    }

    mutating func see(_ e: PanelEvent, upByOwner: Bool) {
        if e.seq != lastSeq + 1 { violations.append("seq gap \(lastSeq) -> \(e.seq)") }
        lastSeq = e.seq
        if !pendingCompletion.isEmpty {
            let expected = pendingCompletion.removeFirst()
            if describe(e) != expected { violations.append("completion interrupted: \(describe(e)) instead of \(expected)") }
        }
        switch e.kind {
        case .pressed(let b, let o):
            let g = config.buttons[b].group
            if open[g] != nil { violations.append("two owners of group \(g)") }
            if case .queue = config.policy(ofGroup: g), let head = waiting[g]?.first {
                if pendingHandOff?.session != head || pendingHandOff?.fence != o.fence || o.session != head {
                    violations.append("group \(g) granted to \(o.session) while \(head) waits first")
                }
                waiting[g]?.removeFirst()
            }
            pendingHandOff = nil
            if case .buzzer = config.policy(ofGroup: g) {
                if round[g] != .armed { violations.append("buzzer \(g) granted while \(round[g] ?? .closed)") }
                round[g] = .won
                lastRank[g] = (1, 0)
            }
            if o.fence <= lastFence { violations.append("fence went back \(lastFence) -> \(o.fence)") }
            lastFence = o.fence
            open[g] = (b, o.fence)
            grants += 1
        case .released(let b, let reason, let o):
            let g = config.buttons[b].group
            if open[g]?.fence != o.fence { violations.append("RELEASED without its PRESSED: \(o.fence)") }
            if (reason == .fired) != firedFences.contains(o.fence), config.buttons[b].kind == .hold {
                violations.append("hold \(o.fence) released \(reason) but fired=\(firedFences.contains(o.fence))")
            }
            open[g] = nil
        case .fired(let b, let o):
            if firedFences.contains(o.fence) { violations.append("second FIRED for \(o.fence)") }
            if config.buttons[b].kind == .talk { violations.append("talk fired") }
            firedFences.insert(o.fence)
            fires += 1
            if config.buttons[b].kind == .hold { pendingCompletion = ["RELEASED \(b) fired \(o.fence)"] }
        case .progress(let b, let p):
            if p == 1000 {
                guard let f = open[config.buttons[b].group]?.fence else { violations.append("progress without owner"); break }
                pendingCompletion = ["FIRED \(b) \(f)"]
            }
        case .stopped(_, _, _, _, let reason):
            if reason == .up, !upByOwner { violations.append("STOPPED before its UP") }
        case .queued(let b, _, let s, let position):
            let g = config.buttons[b].group
            if open[g] == nil { violations.append("queued on free group \(g)") }
            waiting[g, default: []].append(s)
            if position != waiting[g]!.count { violations.append("QUEUED position \(position) of \(waiting[g]!.count)") }
        case .dequeued(let b, _, let s, let position, _):
            let g = config.buttons[b].group
            guard let i = waiting[g]?.firstIndex(of: s) else { violations.append("DEQUEUED \(s) not waiting"); break }
            if i + 1 != position { violations.append("DEQUEUED position \(position), was \(i + 1)") }
            waiting[g]?.remove(at: i)
        case .armed(let g):
            round[g] = .armed
            lastRank[g] = nil
        case .closed(let g):
            round[g] = .closed
        case .buzzed(let r):
            let g = config.buttons[r.button].group
            if round[g] != .won { violations.append("BUZZED while \(round[g] ?? .closed)") }
            if let last = lastRank[g], r.rank != last.rank + 1 || r.afterMicroseconds < last.after {
                violations.append("rank \(r.rank) after_us \(r.afterMicroseconds) after \(last)")
            }
            lastRank[g] = (r.rank, r.afterMicroseconds)
        case .midway, .tapped, .started, .cancelled, .joined, .left, .presence:
            break
        }
    }

    func describe(_ e: PanelEvent) -> String {
        switch e.kind {
        case .fired(let b, let o): "FIRED \(b) \(o.fence)"
        case .released(let b, let r, let o): "RELEASED \(b) \(r.rawValue) \(o.fence)"
        default: "\(e.kind)"
        }
    }
}
