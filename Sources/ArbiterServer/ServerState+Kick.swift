import ArbiterCore

extension ServerState {
    /// The first panel `victim` joined or pressed in whose admin level `key` does not give:
    /// being admin of one panel must not end grants on another. Nil when `key` may kick it.
    func kickRefusal(of victim: Connection, key: String?) -> PanelConfig? {
        let touched = victim.withLock { victim.touched }
        return touched.map { panels[$0].config }.first { access(key: key, on: $0) < .admin }
    }

    /// Another node's admin, who presented `key`, kicks `target`, one of this node's
    /// sessions (`ClusterKicks.kickAsked`); checked as a local admin's KICK is.
    func kickForAnotherNode(_ target: SessionID, key: String?, by admin: SessionID) -> KickOutcome {
        guard let victim = connection(target) else { return .noSuchSession }
        if let panel = kickRefusal(of: victim, key: key) { return .forbidden(panel: panel.id) }
        victim.reactor.requestClose(victim, reason: "kicked by \(admin) on another node")
        return .kicked
    }
}

/// How a KICK asked by another node's admin ended here.
package enum KickOutcome: Sendable {
    case kicked
    case noSuchSession
    /// The admin's key is not the admin key of `panel`, which the session joined or pressed in.
    case forbidden(panel: String)
}
