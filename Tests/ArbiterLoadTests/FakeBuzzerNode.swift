import Foundation
import Glibc
import Synchronization

/// A line server with one buzzer group (`zg`: `z1`, `z2`) that answers like a cluster node
/// whose rounds meet faults: the first `unavailableDowns` DOWNs of players in an open round
/// get `ERROR unavailable` with nothing done (the player's node lapsed), the first
/// `lockedOutDowns` after a round's winner are `DENIED reason=locked-out` (the player's
/// DOWN of the round before met its RESET), and in the first `skippedArmeds` rounds one member is not sent the `ARMED` (its node paused through it);
/// in the first `resyncedArmeds` it is sent a snapshot of the open round instead (its node
/// resynchronised it past the `ARMED`).
/// The first `doubledAnswers` ranked presses are answered `RANKED` twice (a server that
/// breaks "every press gets exactly one answer").
/// Otherwise a well-behaved panel `load`: ARM opens a round, the first DOWN wins, later ones
/// are ranked, RESET closes it, a DOWN while closed is `DENIED reason=early` (no lockout).
/// Events carry no consistent `seq` across skipped lines, so runs against it check nothing.
/// One thread per connection, blocking reads.
final class FakeBuzzerNode: Sendable {
    let port: UInt16
    private let socket: LoopbackListener
    private let state = Mutex(State())

    struct State {
        var seq = 0
        var fence = 0
        var members: [(session: Int, fd: Int32)] = []
        var armed = false
        var winner: (session: Int, button: String, fence: Int)?
        var ranked: [Int] = []
        var unavailableLeft = 0
        var skippedLeft = 0
        var resyncedLeft = 0
        var lockedOutLeft = 0
        var doubledLeft = 0
    }

    init(unavailableDowns: Int = 0, skippedArmeds: Int = 0, resyncedArmeds: Int = 0, lockedOutDowns: Int = 0, doubledAnswers: Int = 0) throws {
        socket = try LoopbackListener()
        port = socket.port
        state.withLock {
            $0.unavailableLeft = unavailableDowns
            $0.skippedLeft = skippedArmeds
            $0.resyncedLeft = resyncedArmeds
            $0.lockedOutLeft = lockedOutDowns
            $0.doubledLeft = doubledAnswers
        }
        socket.serveEach { [self] client, number in serve(client, session: number) }
    }

    private func serve(_ fd: Int32, session: Int) {
        put(fd, "WELCOME session=s\(session) name=guest-\(session) proto=1\n")
        var name = "guest"
        LoopbackListener.readLines(fd) { line in
            let words = line.split(separator: " ").map(String.init)
            if words.first == "HELLO", words.count > 1 { name = words[1] }
            // Under the lock, so replies and events leave in one order on every connection.
            state.withLock { s in answer(words, session: session, name: name, fd: fd, &s) }
        }
    }

    private func answer(_ words: [String], session: Int, name: String, fd: Int32, _ s: inout State) {
        func broadcast(_ event: String, skipping: Int? = nil) {
            s.seq += 1
            for m in s.members where m.session != skipping { put(m.fd, "\(event) seq=\(s.seq)\n") }
        }
        switch words.first ?? "" {
        case "HELLO":
            put(fd, "OK HELLO name=\(name) session=s\(session) role=admin\n")
        case "JOIN":
            put(fd, snapshot(s, members: s.members.count + 1))
            s.members.append((session, fd))
        case "ARM":
            put(fd, "OK ARM load zg\n")
            if let w = s.winner { broadcast("RELEASED load \(w.button) reason=reset owner=x fence=\(w.fence)") }
            s.winner = nil
            s.ranked = []
            s.armed = true
            // The member skipped: the last to join but the host, so a player.
            var skipped: Int?
            var resynced = false
            if s.skippedLeft + s.resyncedLeft > 0, let last = s.members.last(where: { $0.session != session }) {
                skipped = last.session
                resynced = s.skippedLeft == 0
                if resynced { s.resyncedLeft -= 1 } else { s.skippedLeft -= 1 }
            }
            broadcast("ARMED load zg", skipping: skipped)
            if let skipped, resynced, let fd = s.members.first(where: { $0.session == skipped })?.fd {
                // A resync: the round as it stands, in place of the ARMED.
                put(fd, snapshot(s, members: s.members.count))
            }
        case "RESET":
            if let w = s.winner { broadcast("RELEASED load \(w.button) reason=reset owner=x fence=\(w.fence)") }
            s.winner = nil
            s.ranked = []
            if s.armed { broadcast("CLOSED load zg") }
            s.armed = false
            put(fd, "OK RESET load\n")
        case "DOWN" where words.count >= 3:
            let button = words[2]
            guard s.armed else { return put(fd, "DENIED load \(button) reason=early\n") }
            if s.unavailableLeft > 0 {
                s.unavailableLeft -= 1
                return put(fd, "ERROR unavailable \(FakeFailoverNode.lapsed)\n")
            }
            if s.lockedOutLeft > 0, s.winner != nil {
                s.lockedOutLeft -= 1
                return put(fd, "DENIED load \(button) reason=locked-out\n")
            }
            if s.winner == nil {
                s.fence += 1
                s.winner = (session, button, s.fence)
                s.ranked = [session]
                put(fd, "GRANTED load \(button) fence=\(s.fence)\n")
                broadcast("PRESSED load \(button) owner=\(name) session=s\(session) fence=\(s.fence)")
                return
            }
            if !s.ranked.contains(session) { s.ranked.append(session) }
            let rank = (s.ranked.firstIndex(of: session) ?? 0) + 1
            put(fd, "RANKED load \(button) rank=\(rank) after_us=\(rank * 10)\n")
            if s.doubledLeft > 0 {
                s.doubledLeft -= 1
                put(fd, "RANKED load \(button) rank=\(rank) after_us=\(rank * 10)\n")
            }
            broadcast("BUZZED load \(button) name=\(name) session=s\(session) rank=\(rank) after_us=\(rank * 10)")
        case "UP" where words.count >= 3:
            if let w = s.winner, w.session == session, w.button == words[2] {
                s.winner = nil
                broadcast("RELEASED load \(w.button) reason=up owner=\(name) fence=\(w.fence)")
            }
            put(fd, "OK UP load \(words[2])\n")
        case "QUIT":
            put(fd, "OK QUIT\n")
        default:
            put(fd, "ERROR unknown-command \(words.first ?? "")\n")
        }
    }

    private func snapshot(_ s: State, members: Int) -> String {
        var text = ""
        for b in ["z1", "z2"] {
            let owner = s.winner?.button == b ? s.winner : nil
            text += "BUTTON load \(b) kind=tap group=zg policy=buzzer state=\(owner == nil ? "idle" : "pressed") owner=- progress=0.000 owner_session=-\n"
        }
        text += "ROUND load zg state=\(s.armed ? (s.winner == nil ? "armed" : "won") : "closed")\n"
        return text + "OK JOIN load members=\(members) fence=\(s.fence) seq=\(s.seq)\n"
    }

    /// MSG_NOSIGNAL: a member that has gone must not raise SIGPIPE in the test process.
    private func put(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    func stop() {
        socket.stop()
    }
}
