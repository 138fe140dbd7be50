import ArbiterCluster
import ArbiterCore
import ArbiterIO
import ArbiterWire
import Dispatch

extension SessionRunner {
    /// How long a KICK waits for the node the session is on: a round trip, or a link's
    /// dial and its silence timeout when that node has just gone.
    static let kickDeadlineMs = 2_000

    /// `KICK` of a session this node does not have, in cluster mode: the node its number
    /// belongs to is asked (`ClusterContext.kick`), and the answer takes a reply slot so
    /// that it keeps its place among the admin's answers. On the reactor's queue.
    func kickElsewhere(_ target: SessionID, by admin: Connection, format: WireFormat, id: CommandID?, cluster: ClusterContext) {
        let slot = admin.reserveReplySlot()
        let settled = Locked(false)
        // Once: from the answer, or from the deadline.
        @Sendable func answer(_ message: ServerMessage) {
            guard
                settled.withLock({ (done: inout Bool) -> Bool in
                    defer { done = true }
                    return !done
                })
            else { return }
            var flush = FlushList()
            flush.answer(slot, to: admin) { out, _ in MessageEncoder.encode(message, format: format, id: id, into: &out) }
            flush.flushAll()
        }
        let route = cluster.kick(target, key: admin.key, by: admin.session) { verdict, detail in
            switch verdict {
            case .kicked: answer(.okKick(target))
            case .noSuchSession: answer(.error(.noSuchSession, "no session \(target) is connected"))
            case .forbidden: answer(.error(.forbidden, "KICK \(target) needs the admin key of panel \(detail)"))
            }
        }
        switch route {
        case .asked(let query, let node):
            admin.reactor.queue.asyncAfter(deadline: .now() + .milliseconds(Self.kickDeadlineMs)) {
                cluster.kickQueries.forget(query)
                answer(.error(.unavailable, "node \(node), where \(target) is, did not answer in time: it may or may not have been kicked; try again"))
            }
        case .noNode:
            answer(.error(.noSuchSession, "no session \(target) is connected"))
        case .olderNode(let node):
            answer(.error(.unavailable, "\(target) is on node \(node), whose version cannot be asked to KICK; nothing was done, send the KICK there"))
        case .unreachable(let node):
            answer(.error(.unavailable, "node \(node), where \(target) is, cannot be reached; nothing was done, try again"))
        }
    }
}
