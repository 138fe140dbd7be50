import ArbiterServer
import ArbiterCluster
import ArbiterCore
import ArbiterIO
import ArbiterWire

/// An admin's `KICK` of a session on another node, waiting for that node's answer
/// (`SessionRunner.kickElsewhere`): answered once, into the reply slot it took, by the
/// answer or by the deadline. The pending question holds it (`RelayQueries`); the
/// deadline only weakly, so an answered KICK does not keep its connection for seconds.
final class KickWait: Sendable {
    let target: SessionID
    let admin: Connection
    private let slot: UInt64
    private let format: WireFormat
    private let id: CommandID?
    private let settled = Locked(false)

    init(target: SessionID, admin: Connection, format: WireFormat, id: CommandID?) {
        self.target = target
        self.admin = admin
        self.format = format
        self.id = id
        self.slot = admin.reserveKickSlot()
    }

    /// Never left unanswered: the admin's output waits behind the answer.
    deinit {
        answer(.error(.unavailable, "the KICK of \(target) was not answered; it may or may not have been done"))
    }

    /// Writes `message` as the KICK's answer, unless it was answered already. Any thread.
    func answer(_ message: ServerMessage) {
        let first = settled.withLock { (done: inout Bool) -> Bool in
            defer { done = true }
            return !done
        }
        guard first else { return }
        var flush = FlushList()
        flush.answer(slot, to: admin, panel: nil) { [format, id] out, _ in MessageEncoder.encode(message, format: format, id: id, into: &out) }
        flush.flushAll()
    }

    func answer(_ verdict: RelayKickVerdict, detail: String) {
        switch verdict {
        case .kicked: answer(.okKick(target))
        case .noSuchSession: answer(.error(.noSuchSession, "no session \(target) is connected"))
        case .forbidden: answer(.error(.forbidden, "KICK \(target) needs the admin key of panel \(detail)"))
        }
    }
}
