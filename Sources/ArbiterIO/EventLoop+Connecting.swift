import CSystem

extension EventLoop {
    /// Takes a socket whose non-blocking connect is under way (`Sys.connect`) into the
    /// table. Output appended meanwhile waits, as it would for EPOLLOUT, and is written
    /// once the connect is done, right after `connected` (where a client that speaks
    /// first may append its greeting, or before). A connect that fails closes the
    /// channel with the reason `connect: <why>`. On `queue`.
    package final func registerConnecting(_ channel: Channel) {
        assertOnQueue()
        channel.connecting = true
        // Flushes leave the output alone until the socket is writable.
        channel.withLock { channel.output.waitingWritable = true }
        register(channel)
        guard holds(channel), channel.sink == nil else { return }
        channel.withLock { channel.output.updateInterest(fd: channel.fd, epfd: epfd, data: channel.epollData) }
    }

    /// The connecting socket reported `events`: writable once connected, an error or a
    /// hang-up if the connect failed (`SO_ERROR` says why). On `queue`.
    func finishConnect(_ channel: Channel, events: UInt32, flush: inout FlushList) {
        guard events & (cs_EPOLLOUT | cs_EPOLLERR | cs_EPOLLHUP) != 0 else { return }
        channel.connecting = false
        let error = Sys.pendingError(channel.fd)
        guard error == 0 else {
            return close(channel, reason: "connect: \(Sys.Failure(call: "connect", errno: error).reason)")
        }
        connected(channel)
        guard holds(channel) else { return }
        // Writes what waited, and watches EPOLLOUT no longer unless some is left.
        flush.handle(channel.writable(), of: channel)
        wrote(channel)
    }
}
