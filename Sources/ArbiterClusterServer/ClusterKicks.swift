import ArbiterServer
import ArbiterCluster
import ArbiterCore
import ArbiterIO
import ArbiterWire
import Dispatch

/// `KICK` of a session on another node: an admin on any node may kick any session, as on
/// one node. A session's number says which node it is on (`ClusterSetup.owns`); that node
/// checks the admin's key against the panels the session joined or pressed in, which only
/// it knows, and closes the session. A view of the node made where it is used: the KICKs
/// waiting for their answers are the node's (`ClusterContext.kickQueries`), and so is the
/// server's KICK of its own sessions (`ClusterContext.onKick`).
struct ClusterKicks {
    let context: ClusterContext

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
        guard let runtime = context.runtime else { return .noNode }
        let owner = runtime.nodeAddresses().keys.first { $0 != context.node && ClusterSetup.owns($0, session: session.number) }
        guard let owner else { return .noNode }
        guard runtime.node(owner, supports: ClusterFeatures.kick) else { return .olderNode(owner) }
        let id = context.kickQueries.open(session.description, node: owner, done: done)
        guard context.send(.kick(id: id, session: UInt64(session.number), key: key, by: UInt64(admin.number)), toNode: owner) else {
            context.kickQueries.forget(id)
            return .unreachable(owner)
        }
        return .asked(id: id, node: owner)
    }

    /// Another node's admin kicks one of this node's sessions.
    func kickAsked(_ id: UInt64, session: UInt64, key: String?, by admin: UInt64, from asker: String) {
        let target = SessionID(Int(clamping: session))
        let (verdict, detail): (RelayKickVerdict, String)
        switch context.onKick?(target, key, SessionID(Int(clamping: admin))) ?? .noSuchSession {
        case .kicked: (verdict, detail) = (.kicked, "")
        case .noSuchSession: (verdict, detail) = (.noSuchSession, "")
        case .forbidden(let panel): (verdict, detail) = (.forbidden, panel)
        }
        context.log.info(
            "kick asked by another node",
            ["node": asker, "session": target.description, "by": SessionID(Int(clamping: admin)).description, "verdict": "\(verdict)"])
        context.send(.kickAnswer(id: id, session: session, verdict: verdict, detail: detail), toNode: asker)
    }

    func kickAnswered(_ id: UInt64, session: UInt64, verdict: RelayKickVerdict, detail: String, from node: String) {
        context.kickQueries.settle(id, SessionID(Int(clamping: session)).description, from: node)?((verdict, detail))
    }

    /// How long a KICK waits for the node the session is on: a round trip, or a link's
    /// dial and its silence timeout when that node has just gone.
    static let kickDeadlineMs = 2_000

    /// `KICK` of a session this node does not have, in cluster mode: the node its number
    /// belongs to is asked (`kick`), and the answer takes a reply slot so that it keeps its
    /// place among the admin's answers. On the reactor's queue.
    func kickElsewhere(_ target: SessionID, by admin: Connection, format: WireFormat, id: CommandID?) -> Bool {
        guard !ClusterSetup.owns(context.node, session: target.number) else { return false }
        route(KickWait(target: target, admin: admin, format: format, id: id), patienceMs: Self.unreadNodeWaitMs)
        return true
    }

    /// How long a KICK waits for the registration of the node its session's number
    /// belongs to: registrations are read once a second, so a node that started moments
    /// ago, whose session number an admin copied from its WELCOME, is not known yet.
    static let unreadNodeWaitMs = 1_500
    static let unreadNodeRetryMs = 100

    private func route(_ wait: KickWait, patienceMs: Int) {
        let target = wait.target
        let admin = wait.admin
        let route = kick(target, key: admin.key, by: admin.session) { verdict, detail in wait.answer(verdict, detail: detail) }
        switch route {
        case .asked(let query, let node):
            admin.reactor.queue.asyncAfter(deadline: .now() + .milliseconds(Self.kickDeadlineMs)) { [weak wait, weak context] in
                // Nil: answered, and its waiter let go.
                guard let wait else { return }
                context?.kickQueries.forget(query)
                wait.answer(.error(.unavailable, "node \(node), where \(target) is, did not answer in time: it may or may not have been kicked; try again"))
            }
        case .noNode:
            // Only a number some node could number its sessions with (not this node's own)
            // is worth waiting for; `s5` is no session anywhere, at once.
            guard patienceMs > 0, target.number >= ClusterSetup.sessionsPerNode, !ClusterSetup.owns(context.node, session: target.number)
            else {
                return wait.answer(.error(.noSuchSession, "no session \(target) is connected"))
            }
            admin.reactor.queue.asyncAfter(deadline: .now() + .milliseconds(Self.unreadNodeRetryMs)) { [weak context] in
                guard let context else { return wait.answer(.error(.noSuchSession, "no session \(target) is connected")) }
                context.kicks.route(wait, patienceMs: patienceMs - Self.unreadNodeRetryMs)
            }
        case .olderNode(let node):
            wait.answer(.error(.unavailable, "\(target) is on node \(node), whose version cannot be asked to KICK; nothing was done, send the KICK there"))
        case .unreachable(let node):
            wait.answer(.error(.unavailable, "node \(node), where \(target) is, cannot be reached; nothing was done, try again"))
        }
    }
}
