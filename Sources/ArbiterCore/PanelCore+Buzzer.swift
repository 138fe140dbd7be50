/// `buzzer` groups: ARM opens a round, the first DOWN wins as a tap, later ones are
/// ranked by their arrival after the winner's; a press while closed is early and locks
/// its session out for a while.
extension PanelCore {
    mutating func arm(_ group: String, access: Access, now: Instant, into out: inout PanelOutput) {
        guard access >= .admin else {
            return out.append(.reply(.error(.forbidden, "ARM needs the admin key of panel \(config.id)")))
        }
        guard let g = groupNames.firstIndex(of: group), case .buzzer = policies[g] else {
            let buzzers = (0..<groupCount).filter { if case .buzzer = policies[$0] { true } else { false } }.map { groupNames[$0] }
            let known = buzzers.isEmpty ? "it has none" : "its buzzer groups: " + buzzers.joined(separator: ", ")
            return out.append(.reply(.error(.noSuchGroup, "panel \(config.id) has no buzzer group \(group) (\(known))")))
        }
        advance(to: now, into: &out)
        out.append(.reply(.armed(group: group)))
        // The next ARM ends the round: a winner still holding lets go, as on RESET.
        if grants[g] != nil { end(group: g, reason: .reset, now: now, into: &out) }
        rounds[g].open()
        emit(.armed(group: group), into: &out)
    }

    mutating func buzzerDown(
        _ b: Int, group g: Int, lockoutMs: Int64, session: SessionID, name: String,
        now: Instant, into out: inout PanelOutput
    ) {
        if rounds[g].isLockedOut(session, at: now) {
            return out.append(.reply(.denied(button: b, reason: .lockedOut)))
        }
        switch rounds[g].state {
        case .closed:
            if lockoutMs > 0 { rounds[g].lockouts[session] = now + lockoutMs }
            out.append(.reply(.denied(button: b, reason: .early)))
        case .armed:
            let grant = newGrant(button: b, session: session, name: name, now: now)
            rounds[g].state = .won
            rounds[g].wonAt = now
            rounds[g].ranking = [Ranking(button: b, name: name, session: session, rank: 1, afterMicroseconds: 0)]
            out.append(.reply(.granted(button: b, fence: grant.owner.fence)))
            emit(.pressed(button: b, owner: grant.owner), into: &out)
            emit(.fired(button: b, owner: grant.owner), into: &out)
        case .won:
            if let grant = grants[g], grant.owner.session == session, grant.button == b {
                return out.append(.reply(.granted(button: b, fence: grant.owner.fence)))
            }
            if let mine = rounds[g].ranking.first(where: { $0.session == session }) {
                // One place per session and round: pressing again changes nothing.
                return out.append(.reply(.ranked(button: b, rank: mine.rank, afterMicroseconds: mine.afterMicroseconds)))
            }
            // Arrival is when the bytes were read. Presses read by two reactors may be
            // decided out of arrival order by a few microseconds: the rank is the
            // decision order, and after_us never goes below the rank before it.
            let measured = now.microseconds(since: rounds[g].wonAt ?? now)
            let floor = rounds[g].ranking.last?.afterMicroseconds ?? 0
            let ranking = Ranking(
                button: b, name: name, session: session, rank: rounds[g].ranking.count + 1,
                afterMicroseconds: max(measured, floor))
            rounds[g].ranking.append(ranking)
            out.append(.reply(.ranked(button: b, rank: ranking.rank, afterMicroseconds: ranking.afterMicroseconds)))
            emit(.buzzed(ranking), into: &out)
        }
    }
}
