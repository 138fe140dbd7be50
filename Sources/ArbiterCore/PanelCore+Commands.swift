extension PanelCore {
    mutating func join(session: SessionID, name: String, access: Access, now: Instant, into out: inout PanelOutput) {
        guard access >= .view else {
            return out.append(.reply(.error(.forbidden, "JOIN needs the view key of panel \(config.id)")))
        }
        advance(to: now, into: &out)
        let isNew = memberNames.updateValue(name, forKey: session) == nil
        out.append(.reply(.joined(snapshot(at: now))))
        if isNew { emit(.joined(name: name, session: session), into: &out) }
    }

    mutating func down(
        _ b: Int, session: SessionID, name: String, access: Access, now: Instant, into out: inout PanelOutput
    ) {
        guard access >= .press else {
            return out.append(.reply(.deniedForbidden(buttonID: config.buttons[b].id)))
        }
        advance(to: now, into: &out)
        let g = groupOf(b)
        if hasFairGroups, fairDown(b, group: g, session: session, name: name, now: now, into: &out) { return }
        if let grant = grantOf(group: g) {
            if grant.owner.session == session, grant.button == b {
                // Idempotent: a repeated DOWN (a retry, a second finger on the same
                // button) confirms the grant and changes nothing.
                out.append(.reply(.granted(button: b, fence: grant.owner.fence)))
            } else {
                out.append(.reply(.deniedBusy(button: b, owner: grant.owner.name, ownerSession: grant.owner.session, active: grant.button)))
            }
            return
        }
        let grant = newGrant(button: b, session: session, name: name, now: now)
        out.append(.reply(.granted(button: b, fence: grant.owner.fence)))
        emit(.pressed(button: b, owner: grant.owner), into: &out)
        if config.buttons[b].kind == .tap {
            emit(.fired(button: b, owner: grant.owner), into: &out)
        }
    }

    mutating func release(
        _ verb: PanelReply.ReleaseVerb, _ b: Int, fence: UInt64?, session: SessionID,
        access: Access, now: Instant, into out: inout PanelOutput
    ) {
        guard access >= .press else {
            return out.append(.reply(.error(.forbidden, "\(verb.rawValue) needs the press key of panel \(config.id)")))
        }
        func id() -> String { config.buttons[b].id }
        let g = groupOf(b)
        // A hold that already lasted hold_ms fires on this UP even if its timer tick is
        // late; the reply comes first, then the completion events (PROTOCOL.md 6).
        if let grant = grantOf(group: g), grant.button == b, grant.owner.session == session,
            fence == nil || fence == grant.owner.fence,
            case .hold(let clock) = grant.phase, clock.isComplete(at: now)
        {
            out.append(.reply(.released(verb: verb, button: b, ended: nil)))
            advance(to: now, into: &out)
            return
        }
        advance(to: now, into: &out)
        // Letting go while waiting in line: out of the line. With a fence it is about a
        // grant, and a late release never touches what the session does now.
        if hasFairGroups, fence == nil,
            leaveQueue(b, group: g, session: session, reason: verb == .up ? .up : .cancel, reply: .released(verb: verb, button: b, ended: nil), into: &out)
        {
            return
        }
        let current = grantOf(group: g).flatMap { $0.button == b ? $0 : nil }
        if let fence {
            if let current, current.owner.fence == fence {
                // fall through to the ownership check
            } else if current == nil, let ownEnded = endedGrant(button: b, session: session), ownEnded.fence == fence {
                return out.append(.reply(.released(verb: verb, button: b, ended: ownEnded.reason)))
            } else {
                let now = current.map { "the current grant is fence=\($0.owner.fence)" } ?? "\(id()) is not held"
                return out.append(.reply(.error(.staleFence, "fence=\(fence) is not the current grant of \(id()): \(now)")))
            }
        }
        if let current, current.owner.session == session {
            out.append(.reply(.released(verb: verb, button: b, ended: nil)))
            end(group: g, reason: verb == .up ? .up : .cancel, now: now, into: &out)
        } else if let ownEnded = endedGrant(button: b, session: session) {
            out.append(.reply(.released(verb: verb, button: b, ended: ownEnded.reason)))
        } else if let current {
            out.append(.reply(.error(.notOwner, "\(id()) is held by \(current.owner.name), not by you")))
        } else {
            out.append(.reply(.error(.notOwner, "\(id()) is not held by you")))
        }
    }

    /// A press on a button the panel lacks changes nothing; who may not press is told
    /// that first, as for a button that exists.
    func unknownButton(_ verb: Verb, id: String, access: Access, into out: inout PanelOutput) {
        guard access >= .press else {
            if verb == .down { return out.append(.reply(.deniedForbidden(buttonID: id))) }
            return out.append(.reply(.error(.forbidden, "\(verb.rawValue) needs the press key of panel \(config.id)")))
        }
        out.append(.reply(.error(.noSuchButton, "no button \(id) on panel \(config.id); \(buttonList())")))
    }

    /// The panel's button ids for an unknown button's error, as an unknown panel's points
    /// to PANELS: the presser sees what it may press without a JOIN. A panel may have a
    /// thousand buttons, so past `shown` the rest is counted, not listed.
    func buttonList(shown: Int = 20) -> String {
        let ids = config.buttons.prefix(shown).map(\.id).joined(separator: ", ")
        let more = config.buttons.count - shown
        guard more > 0 else { return "its buttons: \(ids)" }
        return "its buttons: \(ids) and \(more) more (JOIN \(config.id) lists them all)"
    }
}
