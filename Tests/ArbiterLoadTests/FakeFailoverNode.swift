import Foundation
import Glibc
import Synchronization

/// A line server that answers like a cluster node around a failover (issue 11): the first
/// `unavailableDowns` DOWNs of the whole run get `ERROR unavailable` (no leader yet), and
/// the first `staleUps` UPs get `ERROR stale-fence` (the grant's term ended under it, and
/// the new leader never granted that fence), and the `unavailableJoins` JOINs after the
/// first (arbiter-load's setup probe) get `ERROR unavailable` (no leader reachable yet). The
/// first `lostDownReplies` granted DOWNs and `lostUpReplies` UPs are answered "may or may not
/// have been done" (the answer lost between nodes): the DOWN was done, the UP was not.
/// The first `refusedUps` UPs are refused with nothing done (a node whose lease lapsed
/// while etcd still keeps it): the grant stands. After the stale ones, the first `endedUps`
/// UPs are answered `OK UP <p> <b> ended=failover` (the session's node knew the grant's
/// term had ended).
/// Everything else is a well-behaved panel `load` with one tap button per group, where a DOWN
/// on the button one holds is answered with the same grant again. One thread per
/// connection, blocking reads.
final class FakeFailoverNode: Sendable {
    let port: UInt16
    private let socket: LoopbackListener
    private let state = Mutex(State())

    struct State {
        var fence = 0
        var unavailableLeft = 0
        var staleLeft = 0
        var joins = 0
        var joinsRefusedLeft = 0
        var holders: [String: (session: Int, fence: Int)] = [:]
        var lostDownsLeft = 0
        var lostUpsLeft = 0
        var refusedUpsLeft = 0
        var endedLeft = 0
    }

    /// Grants still held: none once a run ended well.
    var held: Int { state.withLock { $0.holders.count } }

    init(
        buttons: Int, unavailableDowns: Int, staleUps: Int, unavailableJoins: Int = 0, lostDownReplies: Int = 0, lostUpReplies: Int = 0, refusedUps: Int = 0,
        endedUps: Int = 0
    ) throws {
        socket = try LoopbackListener()
        port = socket.port
        state.withLock {
            $0.unavailableLeft = unavailableDowns
            $0.staleLeft = staleUps
            $0.joinsRefusedLeft = unavailableJoins
            $0.lostDownsLeft = lostDownReplies
            $0.lostUpsLeft = lostUpReplies
            $0.refusedUpsLeft = refusedUps
            $0.endedLeft = endedUps
        }
        socket.serveEach { [self] client, number in serve(client, session: number, buttons: buttons) }
    }

    private func serve(_ fd: Int32, session: Int, buttons: Int) {
        send(fd, "WELCOME session=s\(session) name=guest-\(session) proto=1\n")
        LoopbackListener.readLines(fd) { line in send(fd, answer(line, session: session, buttons: buttons)) }
    }

    private func answer(_ line: String, session: Int, buttons: Int) -> String {
        let words = line.split(separator: " ").map(String.init)
        switch words.first ?? "" {
        case "HELLO":
            return "OK HELLO name=\(words.count > 1 ? words[1] : "guest") session=s\(session) role=admin\n"
        case "JOIN":
            let refused = state.withLock { s in
                s.joins += 1
                guard s.joins > 1, s.joinsRefusedLeft > 0 else { return false }
                s.joinsRefusedLeft -= 1
                return true
            }
            if refused { return "ERROR unavailable the link to panel load's leader dropped; try again in a second or two\n" }
            let fence = state.withLock { $0.fence }
            var text = ""
            for b in 1...buttons {
                text += "BUTTON load b\(b) kind=tap group=g\(b) state=idle owner=- progress=0.000 owner_session=-\n"
            }
            return text + "OK JOIN load members=1 fence=\(fence) seq=0\n"
        case "DOWN" where words.count >= 3:
            return state.withLock { s in
                if s.unavailableLeft > 0 {
                    s.unavailableLeft -= 1
                    return "ERROR unavailable no leader for panel load yet; try again in a second\n"
                }
                if let holder = s.holders[words[2]] {
                    guard holder.session == session else { return "DENIED load \(words[2]) reason=busy owner=x active=\(words[2])\n" }
                    return "GRANTED load \(words[2]) fence=\(holder.fence)\n"
                }
                s.fence += 1
                s.holders[words[2]] = (session, s.fence)
                if s.lostDownsLeft > 0 {
                    s.lostDownsLeft -= 1
                    return "ERROR unavailable \(FakeFailoverNode.lost)\n"
                }
                return "GRANTED load \(words[2]) fence=\(s.fence)\n"
            }
        case "UP" where words.count >= 3:
            return state.withLock { s in
                if s.lostUpsLeft > 0, s.holders[words[2]]?.session == session {
                    s.lostUpsLeft -= 1
                    return "ERROR unavailable \(FakeFailoverNode.lost)\n"
                }
                if s.refusedUpsLeft > 0, s.holders[words[2]]?.session == session {
                    s.refusedUpsLeft -= 1
                    return "ERROR unavailable \(FakeFailoverNode.lapsed)\n"
                }
                s.holders[words[2]] = nil
                if s.staleLeft > 0 {
                    s.staleLeft -= 1
                    return "ERROR stale-fence the grant ended\n"
                }
                if s.endedLeft > 0 {
                    s.endedLeft -= 1
                    return "OK UP load \(words[2]) ended=failover\n"
                }
                return "OK UP load \(words[2])\n"
            }
        case "QUIT":
            return "OK QUIT\n"
        default:
            return "ERROR unknown-command \(words.first ?? "")\n"
        }
    }

    static let lapsed =
        "this node cannot reach etcd right now (its lease lapsed), so it cannot reach panel load's leader safely; nothing was done, try again in a second or two"
    static let lost = "its answer from panel load's leader was lost on the way; it may or may not have been done; try again in a second or two"

    private func send(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    func stop() {
        socket.stop()
    }
}
