/// `--hosts`: a connection whose node goes away (killed, restarted, partitioned) connects
/// to the next node and goes on, as a kiosk would. Its checker stream ends and a new one
/// starts with the new connection's snapshot; a grant it held ends with its node.
extension Engine {
    /// The address `peer` connects to now.
    func address(of peer: Peer) -> (String, UInt16) {
        if plan.options.isRedis { return (plan.options.redisHost ?? plan.options.host, plan.options.redisPort) }
        let target = plan.options.targets[peer.target % plan.options.targets.count]
        return (target.host, target.port)
    }

    /// A connect to `peer`'s node failed: try the next node, if there is one.
    func tryAnotherNode(_ peer: Peer) -> Bool {
        reconnect(peer, phase: control.phase)
    }

    /// Starts `peer` over on the next node. False when there is no other node, the run is
    /// not in a phase that can take it (the final JOIN is read from the nodes it began
    /// on), or every node was tried since it was last ready: then the loss ends the run.
    func reconnect(_ peer: Peer, phase: RunPhase) -> Bool {
        let targets = plan.options.targets.count
        guard targets > 1, !plan.options.isRedis, phase == .connecting || phase == .running else { return false }
        guard peer.connectTries < targets else { return false }
        let settingUpNow = peer.state == .connecting || peer.state == .upgrading || peer.state == .greeting
        if peer.button >= 0, peer.step == .holding || peer.step == .awaitingUp || peer.step == .retryingUp {
            // Its grant ends with its node (reason=failover or disconnect): for the
            // observer-free check it ended when the loss was seen, no later.
            plan.overlap?.released(button: globalButton(peer), by: peer.id, sentAt: LoadClock.now())
        }
        if peer.stream >= 0 {
            let name = "\(peer.name)#\(stats.reconnects + 1)"
            // A DOWN it got no answer to may have been granted before the loss.
            let unanswered = peer.step == .awaitingDown || peer.step == .queued
            peer.stream =
                tellChecker(of: peer) { c in
                    if unanswered { c.lostUnanswered(peer.stream) }
                    c.closeStream(peer.stream)
                    return c.addStream(name: name)
                } ?? -1
        }
        close(peer)
        if settingUpNow { settingUp -= 1 }
        if peer.wasReady && peer.connectTries == 0 { stats.reconnects += 1 }
        peer.connectTries += 1
        peer.target = (peer.target + 1) % targets
        peer.state = .notStarted
        peer.input = []
        peer.output = []
        peer.outputStart = 0
        peer.writeBlocked = false
        peer.handshake = nil
        peer.ws = nil
        peer.session = -1
        peer.step = .idle
        peer.fence = -1
        peer.releasePending = false
        peer.grantEnded = false
        peer.pendingOKs = 0
        peer.downsInFlight = 0  // their answers went with the connection
        peer.timerGeneration &+= 1
        reconnects.append(peer.slot)
        return true
    }
}
