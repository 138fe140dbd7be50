import ArbiterCore

extension MessageEncoder {
    static func describe<S: MessageSink>(_ reply: PanelReply, panel: PanelConfig, id: CommandID?, into s: inout S) {
        func button(_ b: Int) -> String { panel.buttons[b].id }
        switch reply {
        case .granted(let b, let fence):
            s.begin("GRANTED", "granted")
            s.arg("panel", panel.id)
            s.arg("button", button(b))
            s.int("fence", fence)
        case .deniedBusy(let b, let owner, let ownerSession, let active):
            s.begin("DENIED", "denied")
            s.arg("panel", panel.id)
            s.arg("button", button(b))
            s.string("reason", "busy")
            s.string("owner", owner)
            s.string("active", button(active))
            // Last, so scripts reading the fields before it by position keep working.
            s.string("owner_session", ownerSession.description)
        case .deniedForbidden(let id):
            s.begin("DENIED", "denied")
            s.arg("panel", panel.id)
            s.arg("button", id)
            s.string("reason", "forbidden")
        case .released(let verb, let b, let ended):
            switch verb {
            case .up: s.beginOK("UP", "up")
            case .cancel: s.beginOK("CANCEL", "cancel")
            }
            s.arg("panel", panel.id)
            s.arg("button", button(b))
            if let ended { s.string("ended", ended.rawValue) }
        case .joined(let snapshot):
            for b in snapshot.buttons {
                let config = panel.buttons[b.button]
                s.begin("BUTTON", "button")
                s.arg("panel", panel.id)
                s.arg("button", config.id)
                s.string("kind", config.kind.rawValue)
                s.string("group", config.group)
                // Only groups the config describes say so: other lines stay as they were.
                if let policy = panel.groups[config.group], policy != .exclusive { s.string("policy", policy.name) }
                s.string("state", b.state.rawValue)
                s.optionalName("owner", b.owner)
                s.decimal("progress", permille: b.permille)
                s.optionalName("owner_session", b.ownerSession?.description)
                s.end(id: id)
            }
            for group in snapshot.groups { describe(group, panel: panel, id: id, into: &s) }
            s.beginOK("JOIN", "join")
            s.arg("panel", panel.id)
            s.int("members", snapshot.members)
            s.int("fence", snapshot.fence)
            s.int("seq", snapshot.seq)
            if let term = snapshot.term { s.int("term", term) }
            if let joiner = snapshot.joiner {
                // A large panel's joiner is told its own JOINED alone, outside the seq
                // chain (PresenceTally): the line after its snapshot, as an event has it.
                s.end(id: id)
                s.begin("JOINED", "joined")
                s.arg("panel", panel.id)
                s.string("name", joiner.name)
                s.string("session", joiner.session.description)
                return s.end(id: nil)
            }
        case .left:
            s.beginOK("LEAVE", "leave")
            s.arg("panel", panel.id)
        case .reset:
            s.beginOK("RESET", "reset")
            s.arg("panel", panel.id)
        case .error(let code, let message):
            describeError(code, message, into: &s)
        case .queued(let b, let position, let owner):
            s.begin("QUEUED", "queued")
            s.arg("panel", panel.id)
            s.arg("button", button(b))
            s.int("position", position)
            s.string("owner", owner)
        case .ranked(let b, let rank, let after):
            s.begin("RANKED", "ranked")
            s.arg("panel", panel.id)
            s.arg("button", button(b))
            s.int("rank", rank)
            s.int("after_us", after)
        case .denied(let b, let reason):
            s.begin("DENIED", "denied")
            s.arg("panel", panel.id)
            s.arg("button", button(b))
            s.string("reason", reason.rawValue)
        case .armed(let group):
            s.beginOK("ARM", "arm")
            s.arg("panel", panel.id)
            s.arg("group", group)
        case .ranking(let group, let round, let ranking):
            describe(GroupSnapshot(group: group, policy: .buzzer(earlyLockoutMs: 0), round: round, ranking: ranking), panel: panel, id: id, into: &s)
            s.beginOK("RANKING", "ranking")
            s.arg("panel", panel.id)
            s.arg("group", group)
            s.int("ranked", ranking.count)
        }
        s.end(id: id)
    }

    /// The snapshot lines of a queue or buzzer group: `WAITING` per session in line;
    /// `ROUND`, then `RANK` per ranked press.
    static func describe<S: MessageSink>(_ group: GroupSnapshot, panel: PanelConfig, id: CommandID?, into s: inout S) {
        for w in group.waiting {
            s.begin("WAITING", "waiting")
            s.arg("panel", panel.id)
            s.arg("button", panel.buttons[w.button].id)
            s.string("name", w.name)
            s.string("session", w.session.description)
            s.int("position", w.position)
            s.end(id: id)
        }
        guard let round = group.round else { return }
        s.begin("ROUND", "round")
        s.arg("panel", panel.id)
        s.arg("group", group.group)
        s.string("state", round.rawValue)
        s.end(id: id)
        for r in group.ranking {
            s.begin("RANK", "rank")
            s.arg("panel", panel.id)
            s.arg("button", panel.buttons[r.button].id)
            describe(r, into: &s)
            s.end(id: id)
        }
    }

    static func describe<S: MessageSink>(_ r: Ranking, into s: inout S) {
        s.string("name", r.name)
        s.string("session", r.session.description)
        s.int("rank", r.rank)
        s.int("after_us", r.afterMicroseconds)
    }

    /// An event; with `fieldsOnly` the panel and button are left out (a RECORD line
    /// writes them itself) but the verb is still announced.
    static func describe<S: MessageSink>(_ event: PanelEvent, panel: PanelConfig, into s: inout S, fieldsOnly: Bool) {
        func head(_ verb: StaticString, _ type: StaticString, _ b: Int) {
            s.begin(verb, type)
            if !fieldsOnly {
                s.arg("panel", panel.id)
                s.arg("button", panel.buttons[b].id)
            }
        }
        func groupArg(_ group: String) {
            // A RECORD names no button for a group's event: the group is a field there.
            if fieldsOnly { return s.string("group", group) }
            s.arg("panel", panel.id)
            s.arg("group", group)
        }
        func owner(_ o: Owner) {
            s.string("owner", o.name)
            s.string("session", o.session.description)
            s.int("fence", o.fence)
        }
        switch event.kind {
        case .pressed(let b, let o): head("PRESSED", "pressed", b); owner(o)
        case .fired(let b, let o): head("FIRED", "fired", b); owner(o)
        case .progress(let b, let permille): head("PROGRESS", "progress", b); s.decimal("value", permille: permille)
        case .midway(let b): head("MIDWAY", "midway", b)
        case .tapped(let b, let o): head("TAPPED", "tapped", b); owner(o)
        case .started(let b, let o): head("STARTED", "started", b); owner(o)
        case .stopped(let b, let o, let held, let discarded, let reason):
            head("STOPPED", "stopped", b)
            owner(o)
            s.int("held_ms", held)
            s.bool("discarded", discarded)
            s.string("reason", reason.rawValue)
        case .cancelled(let b, let o): head("CANCELLED", "cancelled", b); owner(o)
        case .released(let b, let reason, let o):
            head("RELEASED", "released", b)
            s.string("reason", reason.rawValue)
            s.string("owner", o.name)
            s.int("fence", o.fence)
        case .joined(let name, let session):
            s.begin("JOINED", "joined")
            s.arg("panel", panel.id)
            s.string("name", name)
            s.string("session", session.description)
        case .left(let name, let session):
            s.begin("LEFT", "left")
            s.arg("panel", panel.id)
            s.string("name", name)
            s.string("session", session.description)
        case .presence(let members, let joined, let left):
            s.begin("PRESENCE", "presence")
            s.arg("panel", panel.id)
            s.int("members", members)
            s.int("joined", joined)
            s.int("left", left)
        case .queued(let b, let name, let session, let position):
            head("QUEUED", "queued", b)
            s.string("name", name)
            s.string("session", session.description)
            s.int("position", position)
        case .dequeued(let b, let name, let session, let position, let reason):
            head("DEQUEUED", "dequeued", b)
            s.string("name", name)
            s.string("session", session.description)
            s.int("position", position)
            s.string("reason", reason.rawValue)
        case .buzzed(let r):
            head("BUZZED", "buzzed", r.button)
            describe(r, into: &s)
        case .armed(let group):
            s.begin("ARMED", "armed")
            groupArg(group)
        case .closed(let group):
            s.begin("CLOSED", "closed")
            groupArg(group)
        }
        s.int("seq", event.seq)
        if !fieldsOnly { s.end(id: nil) }
    }

    static func describeError<S: MessageSink>(_ code: ErrorCode, _ message: String, into s: inout S) {
        s.begin("ERROR", "error")
        s.arg("code", code.rawValue)
        s.rest("message", message)
    }
}

extension MessageEncoder {
    /// `encode(_:panel:format:id:into:)` with the common text replies written directly.
    public static func encode(_ reply: PanelReply, names: PanelNames, format: WireFormat, id: CommandID?, into out: inout [UInt8]) {
        guard format == .text else { return encode(reply, panel: names.config, format: format, id: id, into: &out) }
        switch reply {
        case .granted(let b, let fence):
            Bytes.append("GRANTED ", to: &out)
            head(names, b, &out)
            Bytes.append(" fence=", to: &out)
            Bytes.appendDecimal(fence, to: &out)
            out.append(0x0A)
        case .released(let verb, let b, nil):
            Bytes.append(verb == .up ? "OK UP " : "OK CANCEL ", to: &out)
            head(names, b, &out)
            out.append(0x0A)
        case .deniedBusy(let b, let owner, let ownerSession, let active):
            // Contended buttons answer this most: no String is made for it. Names are
            // `[A-Za-z0-9_.-]`, never quoted.
            Bytes.append("DENIED ", to: &out)
            head(names, b, &out)
            Bytes.append(" reason=busy owner=", to: &out)
            out.append(contentsOf: owner.utf8)
            Bytes.append(" active=", to: &out)
            out.append(contentsOf: names.buttons[active])
            Bytes.append(" owner_session=s", to: &out)
            Bytes.appendDecimal(Int64(ownerSession.number), to: &out)
            out.append(0x0A)
        case .queued(let b, let position, let owner) where id == nil:
            // Every DOWN on a busy queue group: as common there as GRANTED.
            Bytes.append("QUEUED ", to: &out)
            head(names, b, &out)
            Bytes.append(" position=", to: &out)
            Bytes.appendDecimal(Int64(position), to: &out)
            Bytes.append(" owner=", to: &out)
            out.append(contentsOf: owner.utf8)
            out.append(0x0A)
        default:
            encode(reply, panel: names.config, format: format, id: id, into: &out)
        }
    }

    /// `encode(_:panel:format:into:)` with the common text events written directly.
    public static func encode(_ event: PanelEvent, names: PanelNames, format: WireFormat, into out: inout [UInt8]) {
        guard format == .text else { return encode(event, panel: names.config, format: format, into: &out) }
        switch event.kind {
        case .pressed(let b, let o), .fired(let b, let o):
            if case .pressed = event.kind { Bytes.append("PRESSED ", to: &out) } else { Bytes.append("FIRED ", to: &out) }
            head(names, b, &out)
            Bytes.append(" owner=", to: &out)
            out.append(contentsOf: o.name.utf8)
            Bytes.append(" session=s", to: &out)
            Bytes.appendDecimal(Int64(o.session.number), to: &out)
            Bytes.append(" fence=", to: &out)
            Bytes.appendDecimal(o.fence, to: &out)
        case .released(let b, let reason, let o):
            Bytes.append("RELEASED ", to: &out)
            head(names, b, &out)
            Bytes.append(" reason=", to: &out)
            out.append(contentsOf: reason.rawValue.utf8)
            Bytes.append(" owner=", to: &out)
            out.append(contentsOf: o.name.utf8)
            Bytes.append(" fence=", to: &out)
            Bytes.appendDecimal(o.fence, to: &out)
        case .queued(let b, let name, let session, let position):
            Bytes.append("QUEUED ", to: &out)
            head(names, b, &out)
            Bytes.append(" name=", to: &out)
            out.append(contentsOf: name.utf8)
            Bytes.append(" session=s", to: &out)
            Bytes.appendDecimal(Int64(session.number), to: &out)
            Bytes.append(" position=", to: &out)
            Bytes.appendDecimal(Int64(position), to: &out)
        default:
            return encode(event, panel: names.config, format: format, into: &out)
        }
        Bytes.append(" seq=", to: &out)
        Bytes.appendDecimal(event.seq, to: &out)
        out.append(0x0A)
    }

    @inline(__always)
    private static func head(_ names: PanelNames, _ b: Int, _ out: inout [UInt8]) {
        out.append(contentsOf: names.panel)
        out.append(0x20)
        out.append(contentsOf: names.buttons[b])
    }
}
