extension Engine {
    /// The equivalent of HELLO/JOIN against Redis: subscribers SUBSCRIBE, everyone
    /// else PINGs so that "ready" means the server has taken the connection.
    func greetRedis(_ peer: Peer) {
        var owner: [UInt8] = []
        CommandBook.bulk(peer.name, into: &owner)
        peer.ownerBulk = owner
        let commands = plan.panels[peer.panel].commands
        send(peer, peer.role == .member ? commands.redisSubscribe : commands.redisPing)
    }

    func consumeRedis(_ peer: Peer, _ bytes: UnsafeBufferPointer<UInt8>) {
        if peer.input.isEmpty {
            let used = replies(peer, bytes)
            if used < bytes.count { peer.input.append(contentsOf: bytes[used...]) }
        } else {
            peer.input.append(contentsOf: bytes)
            let buffered = peer.input
            let used = buffered.withUnsafeBufferPointer { replies(peer, $0) }
            peer.input.removeFirst(used)
        }
    }

    /// Handles every complete reply; returns how many bytes they used.
    private func replies(_ peer: Peer, _ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var at = 0
        // Bounded: each turn consumes one complete reply of the finite buffer.
        while at < bytes.count, peer.fd >= 0 {
            switch RESPParser.parse(bytes, from: at) {
            case .reply(let reply, let end):
                handleRedis(peer, reply, bytes)
                at = end
            case .needMore:
                return at
            case .invalid:
                lost(peer, "unreadable RESP from Redis")
                return bytes.count
            }
        }
        return at
    }

    private func handleRedis(_ peer: Peer, _ r: RESPReply, _ bytes: UnsafeBufferPointer<UInt8>) {
        if r.kind == .error {
            let text = Engine.text(bytes, r.range)
            if peer.state == .greeting { return control.abort("\(peer.name) could not set up: \(text)") }
            stats.error("\(peer.name): \(text)")
            if peer.role == .presser { startCycle(peer) }
            return
        }
        switch peer.state {
        case .greeting:
            becomeReady(peer)
        case .ready:
            switch peer.role {
            case .member: message(peer, r, bytes)
            case .presser: presserRedisReply(peer, r)
            case .observer, .idler, .host, .player: break
            }
        default:
            break
        }
    }

    /// A pub/sub message: `[message, channel, "<id> PRESSED ..."]`.
    private func message(_ peer: Peer, _ r: RESPReply, _ bytes: UnsafeBufferPointer<UInt8>) {
        guard measuring, r.kind == .array, r.count == 3 else { return }
        stats.events += 1
        let payload = r.element(2).range
        var end = payload.lowerBound
        while end < payload.upperBound, bytes[end] != 0x20 { end += 1 }
        if let id = ByteText.integer(bytes, payload.lowerBound..<end), let sent = plan.panels[peer.panel].presses.sentAt(fence: id), now >= sent {
            stats.event.record(now - sent)
        }
    }

    private func presserRedisReply(_ peer: Peer, _ r: RESPReply) {
        switch (plan.options.workload, peer.step, r.kind) {
        case (.contend, .awaitingDown, .simple):
            // SET ... NX answered OK: the lock is ours.
            recordReply(peer)
            if measuring { stats.grants += 1 }
            plan.overlap?.granted(button: globalButton(peer), by: peer.id, readAt: readAt)
            peer.step = .awaitingUp
            peer.sentAt = LoadClock.now()
            // The overlap check's release time is stamped when the DEL is written.
            peer.releasePending = plan.overlap != nil
            send(peer, plan.panels[peer.panel].commands.redisDel[Int(peer.button)])
        case (.contend, .awaitingDown, .null):
            recordReply(peer)
            if measuring { stats.denials += 1 }
            startCycle(peer)
        case (.contend, .awaitingUp, .integer):
            recordReply(peer)
            if measuring { stats.cycles += 1 }
            startCycle(peer)
        case (.fanout, .awaitingDown, .integer):
            // PUBLISH answers with the number of subscribers that got the message.
            recordReply(peer)
            if measuring { stats.cycles += 1 }
            startCycle(peer)
        default:
            stats.error("\(peer.name): unexpected \(r.kind) reply in step \(peer.step)")
            startCycle(peer)
        }
    }

    func startRedisCycle(_ peer: Peer) {
        peer.step = .awaitingDown
        let panel = plan.panels[peer.panel]
        switch plan.options.workload {
        case .fanout:
            let id = plan.publishCounter.wrappingAdd(1, ordering: .relaxed).oldValue
            var payload: [UInt8] = []
            CommandBook.appendDecimal(id, to: &payload)
            payload += panel.commands.publishBody
            peer.sentAt = LoadClock.now()
            panel.presses.store(fence: id, sentAt: peer.sentAt)
            peer.output += panel.commands.redisPublishPrefix
            peer.output.append(UInt8(ascii: "$"))
            CommandBook.appendDecimal(Int64(payload.count), to: &peer.output)
            peer.output += [0x0D, 0x0A]
            peer.output += payload
            peer.output += [0x0D, 0x0A]
        default:
            let b = peer.fixedButton >= 0 ? peer.fixedButton : panel.pressButtons[peer.random.below(panel.pressButtons.count)]
            peer.button = b
            peer.sentAt = LoadClock.now()
            peer.output += panel.commands.redisSetPrefix[Int(b)]
            peer.output += peer.ownerBulk
            peer.output += panel.commands.redisSetTail
        }
        markDirty(peer)
    }
}
