import ArbiterCluster
import ArbiterIO
import ArbiterServer
import Dispatch
import Glibc

/// A relay link's liveness, writing and closing; on its `queue`, as the rest of it.
extension RelayLink {
    // MARK: Liveness

    func startLiveness() {
        lastHeardMs = SystemClock.monotonic.milliseconds()
        let every = network.options.pingIntervalMs
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .milliseconds(every), repeating: .milliseconds(every), leeway: .milliseconds(every / 10))
        timer.setEventHandler { [weak self] in self?.checkLiveness() }
        liveness = timer
        timer.resume()
    }

    /// Closes a link that has been silent too long, else sends a ping. A link with a
    /// sending peer pings through it, since the peer may write to the socket from other
    /// threads; one without (an inbound link not chosen to carry anything) is written only
    /// here. On `queue`.
    private func checkLiveness() {
        guard isUp else { return }
        let silence = network.options.silenceTimeoutMs
        if SystemClock.monotonic.milliseconds() - lastHeardMs > Int64(silence) {
            return close(because: .silent(ms: silence))
        }
        if let peer = sendingPeer, peer.ping(on: self) { return }
        out += RelayLink.pingFrame
        flush()
    }

    static let pingFrame = RelayFrameEncoder.encode(.ping)

    // MARK: Writing

    func connected() -> Bool {
        guard case .connecting(let dialer) = phase else { return true }
        let error = Sys.pendingError(fd)
        guard error == 0 else {
            close(because: .socket("connect: \(Sys.Failure(call: "connect", errno: error).reason)"))
            return false
        }
        phase = .dialing(dialer)
        out += dialer.hello
        flush()
        return !isClosed
    }

    func writable() {
        guard !isClosed else { return }
        if case .connecting = phase {
            guard connected() else { return }
            return
        }
        flush()
    }

    func flush() {
        if outEpoch != 0, outStart < out.count, !network.outputStands(outEpoch) {
            return close(because: .staleOutput)
        }
        while outStart < out.count {
            let result = out.withUnsafeBytes { Sys.write(fd, UnsafeRawBufferPointer(rebasing: $0[outStart...])) }
            switch result {
            case .bytes(let n):
                outStart += n
            case .wouldBlock:
                countWritten()
                compact()
                sendingPeer?.holds(out.count - outStart, on: self)
                armWrite()
                return
            case .eof, .failed:
                let reason: String
                if case .failed(let e) = result { reason = "write: \(Sys.Failure(call: "write", errno: e).reason)" } else { reason = "write failed" }
                return close(because: .socket(reason))
            }
        }
        // Empty for the peer before the frames are counted: a sender that sees them
        // counted may write its next frame directly.
        outEpoch = 0
        sendingPeer?.holds(0, on: self)
        countWritten()
        out.removeAll(keepingCapacity: out.capacity <= 1 << 16)
        outStart = 0
        frameEnds.removeAll(keepingCapacity: true)
        frameHead = 0
        disarmWrite()
    }

    private func countWritten() {
        let before = frameHead
        while frameHead < frameEnds.count, frameEnds[frameHead] <= outStart { frameHead += 1 }
        if frameHead > before { network.wrote(frames: frameHead - before) }
    }

    /// Gives back the written front of a large buffer while the rest waits for the socket.
    private func compact() {
        guard outStart > 1 << 20, outStart * 2 > out.count else { return }
        out.removeFirst(outStart)
        frameEnds.removeFirst(frameHead)
        for i in frameEnds.indices { frameEnds[i] -= outStart }
        frameHead = 0
        outStart = 0
    }

    func armWrite() {
        guard !writeArmed, let writeSource else { return }
        writeArmed = true
        writeSource.resume()
    }

    private func disarmWrite() {
        guard writeArmed, let writeSource else { return }
        writeArmed = false
        writeSource.suspend()
    }

    // MARK: Closing

    /// Closes the link once: a refused handshake first gets its `RELAY-REFUSED` line.
    /// The descriptor is closed when both sources have been cancelled. On `queue`.
    func close(because closing: Closing) {
        let was = phase
        switch was {
        case .closed:
            return
        case .accepting:
            let line: [UInt8]
            switch closing {
            case .error(let error): line = error.refusalLine
            case .timedOut: line = Array("RELAY-REFUSED \(closing.description)\n".utf8)
            case .overflow, .socket, .peerClosed, .silent, .replaced, .stopped, .staleOutput: line = []
            }
            if !line.isEmpty { _ = line.withUnsafeBytes { Sys.write(fd, $0) } }
        case .connecting, .dialing, .up:
            break
        }
        phase = .closed
        liveness?.cancel()
        liveness = nil
        countWritten()
        let unwrittenFrames = frameEnds.count - frameHead
        outEpoch = 0
        out = []
        outStart = 0
        frameEnds = []
        frameHead = 0
        if let readSource, let writeSource {
            // A suspended source must be resumed to be cancelled.
            if !writeArmed { writeSource.resume() }
            writeArmed = true
            writeSource.cancel()
            readSource.cancel()
        } else {
            Sys.close(fd)
            network.socketClosed()
        }
        network.closed(self, was: was, because: closing, unwrittenFrames: unwrittenFrames, sendingPeer: sendingPeer)
        sendingPeer = nil
    }

    func sourceCancelled() {
        liveSources -= 1
        if liveSources == 0 {
            Sys.close(fd)
            network.socketClosed()
            readSource = nil
            writeSource = nil
        }
    }
}
