import ArbiterCluster
import ArbiterIO
import ArbiterServer
import Dispatch

/// A relay link's liveness, writing and closing; on the loop's queue, as the rest of it.
extension RelayLink {
    // MARK: Liveness

    func startLiveness() {
        lastHeardMs = SystemClock.monotonic.milliseconds()
        let every = network.options.pingIntervalMs
        let timer = DispatchSource.makeTimerSource(queue: loop.queue)
        timer.schedule(deadline: .now() + .milliseconds(every), repeating: .milliseconds(every), leeway: .milliseconds(every / 10))
        // Strong: `close` cancels the timer, which lets the handler go.
        timer.setEventHandler { [self] in checkLiveness() }
        liveness = timer
        timer.resume()
    }

    /// Closes a link that has been silent too long, else sends a ping. A link with a
    /// sending peer pings through it, since the peer may write to the socket from other
    /// threads; one without (an inbound link not chosen to carry anything) is written only
    /// here. On the loop's queue.
    private func checkLiveness() {
        guard isUp else { return }
        let silence = network.options.silenceTimeoutMs
        if SystemClock.monotonic.milliseconds() - lastHeardMs > Int64(silence) {
            return close(because: .silent(ms: silence))
        }
        if let peer = sendingPeer, peer.ping(on: self) { return }
        say(RelayLink.pingFrame)
    }

    static let pingFrame = RelayFrameEncoder.encode(.ping)

    // MARK: Writing

    /// Appends bytes that are no frame (a handshake line, a ping) and, if `now`, writes
    /// what the socket takes. On the loop's queue.
    func say(_ bytes: [UInt8], now: Bool = true) {
        let appended = withLock { () -> Bool in
            guard acceptsOutput else { return false }
            appendingOutput { $0 += bytes }
            appendedBytes += bytes.count
            return true
        }
        if appended, now { writeOut() }
    }

    /// Writes what the socket takes now; the rest waits for EPOLLOUT. On the loop's queue.
    func writeOut() {
        switch flush() {
        case .done, .closeNow: break
        case .failed: return close(because: .socket("write failed"))
        case .stale: return close(because: .staleOutput)
        }
        countWritten()
    }

    /// EPOLLOUT: the connect finished, or the output the socket did not take left.
    /// On the loop's queue.
    func wrote() {
        guard case .connecting(let dialer) = phase else { return countWritten() }
        let error = Sys.pendingError(fd)
        guard error == 0 else {
            // The loop's read meets the failure next and closes: with this reason.
            closingBecause = .socket("connect: \(Sys.Failure(call: "connect", errno: error).reason)")
            loop.requestClose(self, reason: "connect failed")
            return
        }
        phase = .dialing(dialer)
        say(dialer.hello)
    }

    /// Counts the frames the socket took since the last count, after telling the sending
    /// peer what is left: a sender that sees them counted may write its next frame
    /// directly. On the loop's queue.
    func countWritten() {
        let (frames, left) = withLock { () -> (Int, Int) in
            // Output dropped (the link closes) was not written: it stays uncounted.
            guard acceptsOutput else { return (0, 0) }
            let written = appendedBytes - pending
            let before = frameHead
            while frameHead < frameEnds.count, frameEnds[frameHead] <= written { frameHead += 1 }
            let counted = frameHead - before
            if frameHead == frameEnds.count {
                frameEnds.removeAll(keepingCapacity: true)
                frameHead = 0
            } else if frameHead >= 1024 {
                frameEnds.removeFirst(frameHead)
                frameHead = 0
            }
            return (counted, pending)
        }
        sendingPeer?.holds(left, on: self)
        if frames > 0 { network.wrote(frames: frames) }
    }

    // MARK: Closing

    /// Closes the link once: a refused handshake first gets its `RELAY-REFUSED` line.
    /// On the loop's queue.
    func close(because closing: Closing) {
        loop.assertOnQueue()
        guard !isClosed else { return }
        if case .accepting = phase {
            let line: [UInt8]
            switch closing {
            case .error(let error): line = error.refusalLine
            case .timedOut: line = Array("RELAY-REFUSED \(closing.description)\n".utf8)
            case .overflow, .socket, .peerClosed, .silent, .replaced, .stopped, .staleOutput: line = []
            }
            // At once and once only: nothing else is written to a link in its handshake.
            if !line.isEmpty { _ = line.withUnsafeBytes { Sys.write(fd, $0) } }
        }
        closingBecause = closing
        guard loop.holds(self) else {
            // Never in the table (the loop's registration failed, or `stop` came first).
            leavingPeer()
            Sys.close(fd)
            return closed(reason: closing.description)
        }
        loop.close(self, reason: closing.description)
    }

    /// The loop is about to close the descriptor: the sending peer lets the link go first,
    /// under its lock, so no direct write can use the descriptor number once reused.
    /// On the loop's queue.
    func leavingPeer() {
        liveness?.cancel()
        liveness = nil
        countWritten()
        let unwrittenFrames = withLock { frameEnds.count - frameHead }
        droppedOnClose = sendingPeer?.linkGone(self, unwrittenFrames: unwrittenFrames) ?? 0
    }

    /// The loop closed the socket (`EventLoop.closed`), for the relay's reason or its own.
    /// On the loop's queue.
    func closed(reason: String) {
        let was = phase
        phase = .closed
        let closing = closingBecause ?? Closing(loopReason: reason)
        closingBecause = closing
        withLock {
            frameEnds = []
            frameHead = 0
        }
        network.socketClosed()
        network.closed(self, was: was, because: closing, dropped: droppedOnClose, sendingPeer: sendingPeer)
        sendingPeer = nil
    }
}
