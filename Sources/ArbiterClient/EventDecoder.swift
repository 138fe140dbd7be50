/// Turns a server line into a `PanelEvent`. Total: a line it cannot read, a type it does
/// not know, or a known type missing a field it needs is `.unknown(line)`, never a crash
/// and never a guess.
enum EventDecoder {
    static func decode(line: String) -> PanelEvent {
        guard let message = ServerMessage(line: line) else { return .unknown(line) }
        return decode(message)
    }

    static func decode(_ m: ServerMessage) -> PanelEvent {
        decodeKnown(m) ?? .unknown(m.line)
    }

    private static func decodeKnown(_ m: ServerMessage) -> PanelEvent? {
        let button = m.string("button")
        switch m.type {
        case "pressed", "fired", "tapped", "started", "cancelled":
            guard let button, let owner = m.string("owner"), let session = m.string("session"), let fence = m.unsigned("fence"),
                let seq = m.seq
            else { return nil }
            switch m.type {
            case "pressed": return .pressed(button: button, owner: owner, session: session, fence: fence, seq: seq)
            case "fired": return .fired(button: button, owner: owner, session: session, fence: fence, seq: seq)
            case "tapped": return .tapped(button: button, owner: owner, session: session, fence: fence, seq: seq)
            case "started": return .started(button: button, owner: owner, session: session, fence: fence, seq: seq)
            default: return .cancelled(button: button, owner: owner, session: session, fence: fence, seq: seq)
            }
        case "stopped":
            guard let button, let owner = m.string("owner"), let session = m.string("session"), let fence = m.unsigned("fence"),
                let held = m.unsigned("held_ms"), let discarded = m.bool("discarded"), let reason = m.string("reason"), let seq = m.seq
            else { return nil }
            return .stopped(
                button: button, owner: owner, session: session, fence: fence, heldMilliseconds: held, discarded: discarded, reason: reason,
                seq: seq)
        case "progress":
            guard let button, let value = m.double("value"), let seq = m.seq else { return nil }
            return .progress(button: button, value: value, seq: seq)
        case "midway":
            guard let button, let seq = m.seq else { return nil }
            return .midway(button: button, seq: seq)
        case "released":
            guard let button, let reason = m.string("reason"), let owner = m.string("owner"), let fence = m.unsigned("fence") else { return nil }
            return .released(button: button, reason: reason, owner: owner, fence: fence, seq: m.seq)
        case "joined", "left":
            guard let name = m.string("name"), let session = m.string("session") else { return nil }
            if m.type == "joined" { return .joined(name: name, session: session, seq: m.seq) }
            guard let seq = m.seq else { return nil }
            return .left(name: name, session: session, seq: seq)
        case "presence":
            guard let members = int(m, "members"), let joined = int(m, "joined"), let left = int(m, "left"), let seq = m.seq else { return nil }
            return .presence(members: members, joined: joined, left: left, seq: seq)
        case "queued", "dequeued":
            guard let button, let name = m.string("name"), let session = m.string("session"), let position = int(m, "position") else { return nil }
            if m.type == "dequeued" {
                guard let reason = m.string("reason") else { return nil }
                return .dequeued(button: button, name: name, session: session, position: position, reason: reason, seq: m.seq)
            }
            guard let seq = m.seq else { return nil }
            return .queued(button: button, name: name, session: session, position: position, seq: seq)
        case "armed", "closed":
            guard let group = m.string("group"), let seq = m.seq else { return nil }
            return m.type == "armed" ? .armed(group: group, seq: seq) : .closed(group: group, seq: seq)
        case "buzzed":
            guard let button, let name = m.string("name"), let session = m.string("session"), let rank = int(m, "rank"),
                let after = m.unsigned("after_us"), let seq = m.seq
            else { return nil }
            return .buzzed(button: button, name: name, session: session, rank: rank, afterMicroseconds: after, seq: seq)
        case "granted":
            guard let button, let fence = m.unsigned("fence") else { return nil }
            return .handedOff(button: button, fence: fence)
        default:
            return nil
        }
    }

    private static func int(_ m: ServerMessage, _ key: String) -> Int? {
        m.unsigned(key).flatMap { Int(exactly: $0) }
    }

    /// A reply's final line as a `PressResult`; nil when it is none.
    static func pressResult(_ m: ServerMessage) -> PressResult? {
        switch m.type {
        case "granted": return m.unsigned("fence").map { .granted(fence: $0) }
        case "denied": return m.string("reason").map { .denied(reason: $0, owner: m.string("owner")) }
        case "queued": return int(m, "position").map { .queued(position: $0) }
        case "ranked":
            guard let rank = int(m, "rank"), let after = m.unsigned("after_us") else { return nil }
            return .ranked(rank: rank, afterMicroseconds: after)
        default: return nil
        }
    }
}
