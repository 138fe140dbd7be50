/// A panel as the server last described it: the JOIN snapshot, kept current by the
/// panel's events (`ArbiterPanel.state`). Nothing in it is decided on the device.
public struct PanelState: Sendable, Equatable {
    public let panel: String
    /// In the server's order.
    public var buttons: [ButtonState]
    public var members: Int
    /// The last fence the panel handed out, as far as this client has seen.
    public var fence: UInt64
    /// The last event folded in.
    public var seq: UInt64
    /// Cluster mode: the term of the leader whose snapshot this is.
    public var term: UInt64?
    /// `queue` groups' lines, in order within each group.
    public var waiting: [WaitingPress]
    /// `buzzer` groups' rounds.
    public var rounds: [BuzzerRound]

    public init(
        panel: String, buttons: [ButtonState], members: Int = 0, fence: UInt64 = 0, seq: UInt64 = 0, term: UInt64? = nil,
        waiting: [WaitingPress] = [], rounds: [BuzzerRound] = []
    ) {
        self.panel = panel
        self.buttons = buttons
        self.members = members
        self.fence = fence
        self.seq = seq
        self.term = term
        self.waiting = waiting
        self.rounds = rounds
    }

    public subscript(button id: String) -> ButtonState? {
        buttons.first { $0.id == id }
    }

    /// The groups, in the order their first button comes.
    public var groups: [String] {
        var seen = Set<String>()
        return buttons.map(\.group).filter { seen.insert($0).inserted }
    }

    /// The snapshot a JOIN answered: its `button`, `waiting`, `round` and `rank` lines and
    /// its final `ok`. Lines it cannot read are left out rather than guessed.
    init(panel: String, lines: [ServerMessage], ok: ServerMessage) {
        self.init(
            panel: panel, buttons: [], members: ok.unsigned("members").flatMap { Int(exactly: $0) } ?? 0, fence: ok.unsigned("fence") ?? 0,
            seq: ok.seq ?? 0, term: ok.unsigned("term"))
        for line in lines {
            switch line.type {
            case "button":
                guard let id = line.string("button"), let kind = line.string("kind"), let group = line.string("group") else { continue }
                buttons.append(
                    ButtonState(
                        id: id, kind: kind, group: group, policy: line.string("policy"), phase: ButtonPhase(wire: line.string("state") ?? "idle"),
                        owner: line.string("owner"), ownerSession: line.string("owner_session"), progress: line.double("progress") ?? 0))
            case "waiting":
                guard let button = line.string("button"), let name = line.string("name"), let session = line.string("session"),
                    let position = line.unsigned("position").flatMap({ Int(exactly: $0) })
                else { continue }
                waiting.append(WaitingPress(button: button, name: name, session: session, position: position))
            case "round":
                guard let group = line.string("group") else { continue }
                rounds.append(BuzzerRound(group: group, state: line.string("state") ?? "closed"))
            case "rank":
                guard !rounds.isEmpty, let button = line.string("button"), let name = line.string("name"), let session = line.string("session"),
                    let rank = line.unsigned("rank").flatMap({ Int(exactly: $0) }), let after = line.unsigned("after_us")
                else { continue }
                rounds[rounds.count - 1].ranks.append(
                    BuzzerRound.Rank(button: button, name: name, session: session, rank: rank, afterMicroseconds: after))
            default:
                continue
            }
        }
    }

    private func group(of button: String) -> String? {
        self[button: button]?.group
    }

    /// Folds in one event of the panel. `me` is this client's session: its own `JOINED`
    /// is already counted in the snapshot's `members`.
    mutating func apply(_ event: PanelEvent, me: String?) {
        if let seq = event.seq { self.seq = max(self.seq, seq) }
        switch event {
        case .pressed(let button, let owner, let session, let fence, _):
            self.fence = max(self.fence, fence)
            guard let group = group(of: button) else { return }
            for index in buttons.indices where buttons[index].group == group {
                let mine = buttons[index].id == button
                buttons[index].phase = mine ? .pressed : .locked
                buttons[index].owner = owner
                buttons[index].ownerSession = session
                buttons[index].fence = mine ? fence : nil
                buttons[index].progress = 0
            }
            leaveLine(group: group, session: session)
            if let round = rounds.firstIndex(where: { $0.group == group }), rounds[round].state == "armed" { rounds[round].state = "won" }
        case .progress(let button, let value, _):
            if let index = buttons.firstIndex(where: { $0.id == button }) { buttons[index].progress = value }
        case .released(let button, _, _, let fence, _):
            guard let group = group(of: button), self[button: button]?.fence.map({ $0 == fence }) ?? true else { return }
            for index in buttons.indices where buttons[index].group == group {
                buttons[index].phase = .idle
                buttons[index].owner = nil
                buttons[index].ownerSession = nil
                buttons[index].fence = nil
                buttons[index].progress = 0
            }
        case .joined(_, let session, _):
            if session != me { members += 1 }
        case .left:
            members = max(0, members - 1)
        case .presence(let count, _, _, _):
            members = count
        case .queued(let button, let name, let session, let position, _):
            waiting.append(WaitingPress(button: button, name: name, session: session, position: position))
        case .dequeued(let button, _, let session, _, _, _):
            if let group = group(of: button) { leaveLine(group: group, session: session) }
        case .armed(let group, _), .closed(let group, _):
            let state = if case .armed = event { "armed" } else { "closed" }
            if let round = rounds.firstIndex(where: { $0.group == group }) {
                rounds[round].state = state
                rounds[round].ranks = []
            } else {
                rounds.append(BuzzerRound(group: group, state: state))
            }
        case .buzzed(let button, let name, let session, let rank, let after, _):
            guard let group = group(of: button), let round = rounds.firstIndex(where: { $0.group == group }) else { return }
            rounds[round].ranks.append(BuzzerRound.Rank(button: button, name: name, session: session, rank: rank, afterMicroseconds: after))
        case .resynced(let fresh, _):
            self = fresh
        default:
            return
        }
    }

    /// `session` leaves its group's line; those behind it move up.
    private mutating func leaveLine(group: String, session: String) {
        let buttons = buttons
        let inGroup = { (entry: WaitingPress) in buttons.first { $0.id == entry.button }?.group == group }
        guard let gone = waiting.firstIndex(where: { $0.session == session && inGroup($0) }) else { return }
        let position = waiting[gone].position
        waiting.remove(at: gone)
        for index in waiting.indices where inGroup(waiting[index]) && waiting[index].position > position {
            waiting[index].position -= 1
        }
    }
}
