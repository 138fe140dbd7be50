import ArbiterCore

extension ServerState {
    /// The first panel `victim` joined or pressed in whose admin level `key` does not give:
    /// being admin of one panel must not end grants on another. Nil when `key` may kick it.
    func kickRefusal(of victim: Connection, key: String?) -> PanelConfig? {
        Self.kickRefusal(of: victim, key: key, configs: panels.map(\.config), hasKeys: hasKeys)
    }

    private static func kickRefusal(of victim: Connection, key: String?, configs: [PanelConfig], hasKeys: Bool) -> PanelConfig? {
        let touched = victim.withLock { victim.touched }
        return touched.map { configs[$0] }.first { $0.access(forKey: key, serverHasKeys: hasKeys) < .admin }
    }

    /// What a KICK of one of this node's sessions by another node's admin, who presented
    /// `key`, does (`ClusterKicks.kickAsked`); checked as a local admin's KICK is. It holds
    /// the session registry weakly, not the server: a weak reference to the server gave it
    /// a side table, and every retain of it the runtime's slow path, which the reactors pay
    /// several times per command (callgrind: about 450 instructions per relayed press).
    func kickForAnotherNode() -> @Sendable (_ target: SessionID, _ key: String?, _ admin: SessionID) -> KickOutcome {
        let configs = panels.map(\.config)
        let hasKeys = hasKeys
        return { [weak registry] target, key, admin in
            guard let victim = registry?.withLock({ $0[target] }) else { return .noSuchSession }
            if let panel = ServerState.kickRefusal(of: victim, key: key, configs: configs, hasKeys: hasKeys) { return .forbidden(panel: panel.id) }
            victim.reactor.requestClose(victim, reason: "kicked by \(admin) on another node")
            return .kicked
        }
    }
}

/// How a KICK asked by another node's admin ended here.
package enum KickOutcome: Sendable {
    case kicked
    case noSuchSession
    /// The admin's key is not the admin key of `panel`, which the session joined or pressed in.
    case forbidden(panel: String)
}
