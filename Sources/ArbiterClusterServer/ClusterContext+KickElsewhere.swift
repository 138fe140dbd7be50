import ArbiterServer
import ArbiterCluster
import ArbiterCore
import ArbiterIO
import ArbiterWire
import Dispatch

extension ClusterContext {
    /// How long a KICK waits for the node the session is on: a round trip, or a link's
    /// dial and its silence timeout when that node has just gone.
    static let kickDeadlineMs = 2_000

    /// `KICK` of a session this node does not have, in cluster mode: the node its number
    /// belongs to is asked (`ClusterContext.kick`), and the answer takes a reply slot so
    /// that it keeps its place among the admin's answers. On the reactor's queue.
    func kickElsewhere(_ target: SessionID, by admin: Connection, format: WireFormat, id: CommandID?) -> Bool {
        guard !ClusterSetup.owns(node, session: target.number) else { return false }
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
            admin.reactor.queue.asyncAfter(deadline: .now() + .milliseconds(Self.kickDeadlineMs)) { [weak wait, weak self] in
                // Nil: answered, and its waiter let go.
                guard let wait else { return }
                self?.kickQueries.forget(query)
                wait.answer(.error(.unavailable, "node \(node), where \(target) is, did not answer in time: it may or may not have been kicked; try again"))
            }
        case .noNode:
            // Only a number some node could number its sessions with (not this node's own)
            // is worth waiting for; `s5` is no session anywhere, at once.
            guard patienceMs > 0, target.number >= ClusterSetup.sessionsPerNode, !ClusterSetup.owns(node, session: target.number)
            else {
                return wait.answer(.error(.noSuchSession, "no session \(target) is connected"))
            }
            admin.reactor.queue.asyncAfter(deadline: .now() + .milliseconds(Self.unreadNodeRetryMs)) { [weak self] in
                guard let self else { return wait.answer(.error(.noSuchSession, "no session \(target) is connected")) }
                self.route(wait, patienceMs: patienceMs - Self.unreadNodeRetryMs)
            }
        case .olderNode(let node):
            wait.answer(.error(.unavailable, "\(target) is on node \(node), whose version cannot be asked to KICK; nothing was done, send the KICK there"))
        case .unreachable(let node):
            wait.answer(.error(.unavailable, "node \(node), where \(target) is, cannot be reached; nothing was done, try again"))
        }
    }
}
