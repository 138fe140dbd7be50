/// One joined panel's bookkeeping, apart from any socket: its state, the `seq` chain, and
/// this client's own grants and places in line, so that a resync can tell which of them
/// ended unseen. Owned by `ClientCore` under its lock.
struct PanelTracker {
    /// A grant `down` (or a queue's hand-off) gave this client; `session` is the
    /// connection's, since after a reconnect the old session may still hold it a while.
    struct Grant: Equatable {
        let fence: UInt64
        let session: String
    }

    /// A press that ended while its `RELEASED` (or `DEQUEUED`) could not be heard.
    struct Ended: Equatable {
        let button: String
        let fence: UInt64?
        var reason: String?
    }

    enum Output: Equatable {
        case event(PanelEvent)
        /// The chain broke: the panel must be joined again; events are dropped until then.
        case resyncNeeded(expected: UInt64, received: UInt64)
        /// A pushed snapshot showed these presses ended unseen (`resolve` names why).
        case endedUnseen([Ended])
    }

    let panel: String
    private(set) var state: PanelState?
    /// Events are passed on only while live; `seq` is checked against `lastSeq`.
    private(set) var live = false
    private(set) var lastSeq: UInt64 = 0
    /// A snapshot the server is pushing (lines without an `id`), until its `ok`.
    private var pushed: [ServerMessage] = []
    private(set) var grants: [String: Grant] = [:]
    /// Buttons this client waits for in a queue, with the session that waits.
    private(set) var waits: [String: String] = [:]
    /// Ends reported by `endedWhileAway`, kept so that the finger's `up` is answered
    /// without asking the server, which would no longer know this client.
    private(set) var endedAway: [String: Ended] = [:]
    /// Ends found by a snapshot whose HISTORY went unanswered (the link died first): the
    /// next snapshot asks again, or the app would never hear of them.
    private(set) var unreported: [Ended] = []

    init(panel: String) {
        self.panel = panel
    }

    var hasBeenJoined: Bool { state != nil }

    /// The link under this panel dropped: nothing more until the next snapshot.
    mutating func pause() {
        live = false
        pushed = []
    }

    /// A line about this panel that is no reply to a command of ours.
    mutating func receive(_ m: ServerMessage, me: String?) -> [Output] {
        if m.isReplyPart {
            pushed.append(m)
            return []
        }
        if m.type == "ok" {
            guard m.string("re") == "join" else { return [] }
            let (events, ended) = applySnapshot(lines: pushed, ok: m, cause: .pushedByServer(term: m.unsigned("term")), me: me)
            return events.map { .event($0) } + (ended.isEmpty ? [] : [.endedUnseen(ended)])
        }
        // The chain counts every line with a seq, known or not: an event type a later
        // server adds must not look like a gap.
        if let seq = m.seq {
            guard live, seq > lastSeq else { return [] }
            guard seq == lastSeq + 1 else {
                live = false
                return [.resyncNeeded(expected: lastSeq + 1, received: seq)]
            }
            lastSeq = seq
        }
        let event = EventDecoder.decode(m)
        note(event, me: me)
        state?.apply(event, me: me)
        return [.event(event)]
    }

    private mutating func note(_ event: PanelEvent, me: String?) {
        switch event {
        case .released(let button, _, _, let fence, _):
            if grants[button]?.fence == fence { grants[button] = nil }
        case .handedOff(let button, let fence):
            if let me { grants[button] = Grant(fence: fence, session: me) }
            waits[button] = nil
            endedAway[button] = nil
        case .dequeued(let button, _, let session, _, _, _):
            if waits[button] == session { waits[button] = nil }
        default:
            break
        }
    }

    /// A snapshot replaces the state: `cause` nil for the first JOIN. Returns the events
    /// to pass on and the presses it shows ended unseen.
    mutating func applySnapshot(lines: [ServerMessage], ok: ServerMessage, cause: ResyncCause?, me: String?) -> (
        events: [PanelEvent], ended: [Ended]
    ) {
        var fresh = PanelState(panel: panel, lines: lines, ok: ok)
        var ended: [Ended] = []
        for (button, grant) in grants.sorted(by: { $0.key < $1.key }) {
            if let index = fresh.buttons.firstIndex(where: { $0.id == button }), fresh.buttons[index].ownerSession == grant.session {
                fresh.buttons[index].fence = grant.fence
            } else {
                grants[button] = nil
                ended.append(Ended(button: button, fence: grant.fence))
            }
        }
        for (button, session) in waits.sorted(by: { $0.key < $1.key })
        where !fresh.waiting.contains(where: { $0.button == button && $0.session == session }) {
            waits[button] = nil
            ended.append(Ended(button: button, fence: nil))
        }
        ended = unreported.filter { old in !ended.contains { $0.button == old.button && $0.fence == old.fence } } + ended
        unreported = []
        // A button granted again since keeps that grant's answer to `up`.
        for end in ended where grants[end.button] == nil { endedAway[end.button] = end }
        state = fresh
        lastSeq = fresh.seq
        live = true
        pushed = []
        return (cause.map { [.resynced(fresh, cause: $0)] } ?? [], ended)
    }

    /// The HISTORY asked about `ended` will not be answered: they wait for the next snapshot.
    mutating func unanswered(_ ended: [Ended]) {
        unreported += ended
    }

    /// The server's HISTORY named why some of `ended` ended: the events that report them.
    mutating func resolve(_ ended: [Ended], records: [ServerMessage]) -> [PanelEvent] {
        ended.map { end in
            var end = end
            let record = records.last { record in
                guard record.string("button") == end.button else { return false }
                if let fence = end.fence { return record.string("event") == "released" && record.unsigned("fence") == fence }
                return record.string("event") == "dequeued"
            }
            end.reason = record?.string("reason")
            if endedAway[end.button]?.fence == end.fence { endedAway[end.button] = end }
            return .endedWhileAway(button: end.button, fence: end.fence, reason: end.reason)
        }
    }

    mutating func granted(_ button: String, fence: UInt64, session: String) {
        grants[button] = Grant(fence: fence, session: session)
        endedAway[button] = nil
    }

    mutating func queued(_ button: String, session: String) {
        waits[button] = session
        endedAway[button] = nil
    }

    /// The server answered this client's UP or CANCEL of `button`.
    mutating func released(_ button: String) {
        grants[button] = nil
        waits[button] = nil
        endedAway[button] = nil
    }

    /// The answer to an `up` of `button` that the server cannot give: a grant that ended
    /// unseen, or one that belongs to a connection that is gone. Nil: ask the server.
    mutating func localRelease(_ button: String, session: String?) -> ReleaseResult? {
        if let grant = grants[button] {
            guard grant.session != session else { return nil }
            // The old connection's grant: only its end (disconnect) can release it.
            grants[button] = nil
            return .alreadyEnded(reason: nil)
        }
        if waits[button] != nil { return nil }
        guard let end = endedAway.removeValue(forKey: button) else { return nil }
        return .alreadyEnded(reason: end.reason)
    }
}
