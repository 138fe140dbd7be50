import ArbiterServer
import ArbiterCluster
import ArbiterCore

/// `KICK` of a session on another node: an admin on any node may kick any session, as on
/// one node. A session's number says which node it is on (`ClusterSetup.owns`); that node
/// checks the admin's key against the panels the session joined or pressed in, which only
/// it knows, and closes the session.
extension ClusterContext {
    enum KickRoute: Equatable {
        /// Asked of `node`: its answer goes to `done`, unless forgotten at the deadline.
        case asked(id: UInt64, node: String)
        /// No live node numbers its sessions there.
        case noNode
        /// The session's node runs an older version, which would close the link on the frame.
        case olderNode(String)
        /// No link to the session's node can carry it.
        case unreachable(String)
    }

    func kick(
        _ session: SessionID, key: String?, by admin: SessionID, done: @escaping RelayQueries<(RelayKickVerdict, String)>.Done
    ) -> KickRoute {
        guard let runtime else { return .noNode }
        let owner = runtime.nodeAddresses().keys.first { $0 != node && ClusterSetup.owns($0, session: session.number) }
        guard let owner else { return .noNode }
        guard runtime.node(owner, supports: ClusterFeatures.kick) else { return .olderNode(owner) }
        let id = kickQueries.open(session.description, node: owner, done: done)
        guard send(.kick(id: id, session: UInt64(session.number), key: key, by: UInt64(admin.number)), toNode: owner) else {
            kickQueries.forget(id)
            return .unreachable(owner)
        }
        return .asked(id: id, node: owner)
    }

    /// Another node's admin kicks one of this node's sessions.
    func kickAsked(_ id: UInt64, session: UInt64, key: String?, by admin: UInt64, from asker: String) {
        let target = SessionID(Int(clamping: session))
        let (verdict, detail): (RelayKickVerdict, String)
        switch onKick?(target, key, SessionID(Int(clamping: admin))) ?? .noSuchSession {
        case .kicked: (verdict, detail) = (.kicked, "")
        case .noSuchSession: (verdict, detail) = (.noSuchSession, "")
        case .forbidden(let panel): (verdict, detail) = (.forbidden, panel)
        }
        log.info(
            "kick asked by another node",
            ["node": asker, "session": target.description, "by": SessionID(Int(clamping: admin)).description, "verdict": "\(verdict)"])
        send(.kickAnswer(id: id, session: session, verdict: verdict, detail: detail), toNode: asker)
    }

    func kickAnswered(_ id: UInt64, session: UInt64, verdict: RelayKickVerdict, detail: String, from node: String) {
        kickQueries.settle(id, SessionID(Int(clamping: session)).description, from: node)?((verdict, detail))
    }
}
