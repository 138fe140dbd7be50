import ArbiterIO
import CSystem
import Glibc

extension Engine {
    /// Peers handed over already connected and greeted (the setup observer).
    func adoptPreconnected() {
        for peer in peers where peer.fd >= 0 {
            epoll?.add(peer.fd, events: cs_EPOLLIN | cs_EPOLLRDHUP, data: UInt64(peer.slot))
            if !peer.input.isEmpty {
                // Bytes the setup read past its last line: the first events.
                let leftover = peer.input
                peer.input = []
                now = LoadClock.now()
                readAt = now
                leftover.withUnsafeBufferPointer { consume(peer, $0) }
            }
        }
    }

    /// Starts connects while fewer than `--connect-batch` peers are being set up.
    func connectMore() {
        while settingUp < plan.options.connectBatch, !reconnects.isEmpty || nextToConnect < peers.count {
            let peer: Peer
            if !reconnects.isEmpty {
                peer = peers[reconnects.removeFirst()]
            } else {
                peer = peers[nextToConnect]
                nextToConnect += 1
                peer.target = peer.id % plan.options.targets.count
            }
            guard peer.state == .notStarted else { continue }
            let (host, port) = address(of: peer)
            switch Sys.connect(host: host, port: port) {
            case .success(let fd):
                peer.fd = fd
                peer.state = .connecting
                settingUp += 1
                let err = epoll?.add(fd, events: cs_EPOLLOUT | cs_EPOLLIN | cs_EPOLLRDHUP, data: UInt64(peer.slot)) ?? EBADF
                if err != 0 { return control.abort("epoll_ctl: errno \(err)") }
            case .failure(let error):
                return control.abort("\(peer.name): \(error)\(error.errno == 24 ? " (raise ulimit -n)" : "")")
            }
        }
    }

    /// EPOLLOUT on a connecting socket: the connect finished one way or the other.
    func connected(_ peer: Peer) {
        let err = Sys.pendingError(peer.fd)
        guard err == 0 else {
            let (host, port) = address(of: peer)
            if tryAnotherNode(peer) { return }
            return control.abort("cannot connect to \(HostLiteral.authority(host, port: port)): \(Sys.Failure(call: "connect", errno: err).reason)")
        }
        epoll?.modify(peer.fd, events: cs_EPOLLIN | cs_EPOLLRDHUP, data: UInt64(peer.slot))
        switch peer.transport {
        case .line:
            peer.state = .greeting
            greetLine(peer)
        case .webSocket:
            peer.state = .upgrading
            var nonce: [UInt8] = []
            for _ in 0..<16 { nonce.append(UInt8(truncatingIfNeeded: peer.random.next())) }
            let (host, port) = address(of: peer)
            let handshake = WebSocketClientHandshake(host: host, port: port, nonce: nonce)
            peer.handshake = handshake
            peer.ws = WebSocketClientCodec(seed: peer.random.next())
            send(peer, handshake.request)
        case .redis:
            peer.state = .greeting
            greetRedis(peer)
        }
    }

    /// The peer finished its setup.
    func becomeReady(_ peer: Peer) {
        guard peer.state != .ready else { return }
        peer.state = .ready
        settingUp -= 1
        peer.connectTries = 0
        if !peer.wasReady { control.readyPeers.wrappingAdd(1, ordering: .relaxed) }
        peer.wasReady = true
        if control.phase == .running { start(peer) }
    }

    func readable(_ peer: Peer) {
        guard let epoll else { return }
        switch epoll.read(peer.fd) {
        case .bytes(let bytes):
            if stampsReads { readAt = LoadClock.now() }
            consume(peer, bytes)
        case .wouldBlock:
            return
        case .eof:
            lost(peer, "the server closed the connection")
        case .failed(let e):
            lost(peer, Sys.Failure(call: "read", errno: e).description)
        }
    }

    /// A connection ended that should not have.
    func lost(_ peer: Peer, _ why: String) {
        let phase = control.phase
        if reconnect(peer, phase: phase) { return }
        close(peer)
        guard phase != .done && phase != .aborted else { return }
        control.abort("\(peer.name) (\(peer.role), \(peer.transport)): \(why) during \(phase)")
    }

    func consume(_ peer: Peer, _ bytes: UnsafeBufferPointer<UInt8>) {
        switch peer.transport {
        case .line: consumeLines(peer, bytes)
        case .webSocket: consumeWebSocket(peer, bytes)
        case .redis: consumeRedis(peer, bytes)
        }
    }

    private func consumeLines(_ peer: Peer, _ bytes: UnsafeBufferPointer<UInt8>) {
        if peer.input.isEmpty {
            let used = lines(peer, bytes)
            if used < bytes.count { peer.input.append(contentsOf: bytes[used...]) }
        } else {
            peer.input.append(contentsOf: bytes)
            let buffered = peer.input
            let used = buffered.withUnsafeBufferPointer { lines(peer, $0) }
            peer.input.removeFirst(used)
        }
    }

    /// Handles every complete line; returns how many bytes they used.
    private func lines(_ peer: Peer, _ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        let table = plan.table(peer.panel)
        var start = 0
        for i in 0..<bytes.count where bytes[i] == 0x0A {
            if i > start {
                let range = start..<i
                let m =
                    bytes[start] == UInt8(ascii: "{")
                    ? JSONMessageParser.parse(bytes, range, buttons: table)
                    : LineMessageParser.parse(bytes, range, buttons: table)
                handle(peer, m, bytes, range)
                if peer.fd < 0 { return bytes.count }
            }
            start = i + 1
        }
        return start
    }

    private func consumeWebSocket(_ peer: Peer, _ bytes: UnsafeBufferPointer<UInt8>) {
        if peer.state == .upgrading {
            peer.input.append(contentsOf: bytes)
            guard let handshake = peer.handshake else { return }
            switch handshake.check(peer.input) {
            case .needMore:
                return
            case .refused(let status):
                return control.abort("WebSocket upgrade refused by \(plan.options.serverAuthority): \(status)")
            case .accepted(let bodyStart):
                peer.ws?.append(peer.input[bodyStart...])
                peer.input = []
                peer.state = .greeting
                greetWebSocket(peer)
            }
        } else {
            peer.ws?.append(bytes)
        }
        // Bounded: each turn consumes one complete message of the finite input.
        while peer.fd >= 0 {
            let message: WebSocketClientCodec.Incoming?
            do {
                message = try peer.ws?.next()
            } catch {
                return lost(peer, "WebSocket: \(error)")
            }
            guard let message else { return }
            switch message {
            case .text(let payload):
                payload.withUnsafeBufferPointer { buffer in
                    handle(peer, JSONMessageParser.parse(buffer, 0..<buffer.count, buttons: plan.table(peer.panel)), buffer, 0..<buffer.count)
                }
            case .ping(let payload):
                var frame: [UInt8] = []
                peer.ws?.appendPong(payload, to: &frame)
                send(peer, frame)
            case .pong, .binary:
                break
            case .close:
                return lost(peer, "the server sent a WebSocket close")
            }
        }
    }

    func send(_ peer: Peer, _ bytes: [UInt8]) {
        peer.output.append(contentsOf: bytes)
        markDirty(peer)
    }

    @inline(__always)
    func markDirty(_ peer: Peer) {
        guard !peer.dirty else { return }
        peer.dirty = true
        dirty.append(peer.slot)
    }

    func flushDirty() {
        for slot in dirty {
            let peer = peers[slot]
            peer.dirty = false
            if !peer.writeBlocked { write(peer) }
        }
        dirty.removeAll(keepingCapacity: true)
    }

    func writable(_ peer: Peer) {
        guard peer.writeBlocked else { return }
        peer.writeBlocked = false
        write(peer)
        if !peer.writeBlocked, peer.fd >= 0 {
            epoll?.modify(peer.fd, events: cs_EPOLLIN | cs_EPOLLRDHUP, data: UInt64(peer.slot))
        }
    }

    private func write(_ peer: Peer) {
        guard peer.fd >= 0 else { return }
        if peer.releasePending {
            // Stamped before the write that carries the UP (DEL): the server cannot have
            // received the release earlier, so no grant of the group may be read before.
            peer.releasePending = false
            plan.overlap?.released(button: globalButton(peer), by: peer.id, sentAt: LoadClock.now())
        }
        if peer.downPending {
            // buzz: a press is sent when its write starts, not when it was queued behind
            // other peers' writes (`ArrivalOrder`).
            peer.downPending = false
            peer.downWrittenAt = LoadClock.now()
        }
        while peer.outputStart < peer.output.count {
            let result = peer.output.withUnsafeBytes { raw in
                Sys.write(peer.fd, UnsafeRawBufferPointer(rebasing: raw[peer.outputStart...]))
            }
            switch result {
            case .bytes(let n):
                peer.outputStart += n
            case .wouldBlock:
                peer.writeBlocked = true
                epoll?.modify(peer.fd, events: cs_EPOLLIN | cs_EPOLLOUT | cs_EPOLLRDHUP, data: UInt64(peer.slot))
                return
            case .eof, .failed:
                return lost(peer, "write failed")
            }
        }
        peer.output.removeAll(keepingCapacity: peer.output.capacity <= 4096)
        peer.outputStart = 0
    }

    func close(_ peer: Peer) {
        guard peer.fd >= 0 else { return }
        epoll?.remove(peer.fd)
        Sys.close(peer.fd)
        peer.fd = -1
        peer.state = .closed
    }
}
