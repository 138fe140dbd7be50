import ArbiterCluster
import ArbiterClusterRuntime
import ArbiterIO
import ArbiterTestSupport
import Foundation
import Glibc

/// Strangers flooding a node's port with relay handshakes they never finish:
/// `perSource` connections from each of `sources` (other loopback addresses, 127.0.0.2 and
/// up: Linux routes all of 127/8 to lo), each sending `RELAY-HELLO` and then nothing, as
/// the hostile tester's did. A connection that held a slot (it was challenged) and is
/// closed (its deadline passed) is opened again at once, and so is every one refused
/// meanwhile, since a slot may have come free: the flood takes back every slot it can as
/// soon as it can, without spinning on refusals in between.
final class RelayHandshakeFlood: @unchecked Sendable {
    private struct Connection {
        let source: String
        var socket: RawSocket?
        /// Challenged, so holding a handshake slot on the node.
        var held = false
    }

    private let port: UInt16
    private let lock = NSLock()
    private var stopping = false
    private var heldNow = 0
    private var refusedSoFar = 0
    private var openedSoFar = 0
    private let done = DispatchSemaphore(value: 0)

    /// Connections challenged and still open.
    var held: Int { lock.withLock { heldNow } }
    /// Connections the node closed without a challenge (no slot).
    var refused: Int { lock.withLock { refusedSoFar } }
    /// Connections opened, in all.
    var opened: Int { lock.withLock { openedSoFar } }

    /// Starts the flood on a thread of its own; it runs until `stop`, or 60 s at most.
    init(port: UInt16, sources: [String], perSource: Int) {
        self.port = port
        let connections = sources.flatMap { source in (0..<perSource).map { _ in Connection(source: source) } }
        Thread.detachNewThread { [self] in
            run(connections)
            done.signal()
        }
    }

    deinit { stop() }

    /// Ends the flood and closes its connections; returns once they are closed.
    func stop() {
        let first = lock.withLock {
            defer { stopping = true }
            return !stopping
        }
        if first { done.wait() }
    }

    private var isStopping: Bool { lock.withLock { stopping } }

    private func run(_ initial: [Connection]) {
        var connections = initial
        for i in connections.indices { open(&connections[i]) }
        let end = DispatchTime.now().uptimeNanoseconds + 60_000_000_000
        // Bounded by the 60 s above: every turn waits in poll for a socket or 50 ms, the
        // longest `stop` waits to be seen.
        while !isStopping, DispatchTime.now().uptimeNanoseconds < end {
            var fds = connections.map { pollfd(fd: $0.socket?.fd ?? -1, events: Int16(POLLIN), revents: 0) }
            guard poll(&fds, nfds_t(fds.count), 50) > 0 else { continue }
            var slotFreed = false
            for i in connections.indices where fds[i].revents != 0 {
                guard let socket = connections[i].socket else { continue }
                let bytes = (try? socket.read(timeout: 0.001)) ?? []
                if !bytes.isEmpty {
                    if !connections[i].held, String(decoding: bytes, as: UTF8.self).hasPrefix("RELAY-CHALLENGE") {
                        connections[i].held = true
                        lock.withLock { heldNow += 1 }
                    }
                    if !String(decoding: bytes, as: UTF8.self).contains("RELAY-REFUSED") { continue }
                }
                // Refused, timed out or closed: the node is done with it.
                let wasHeld = connections[i].held
                lock.withLock {
                    if wasHeld { heldNow -= 1 } else { refusedSoFar += 1 }
                }
                connections[i].socket = nil
                connections[i].held = false
                if wasHeld {
                    slotFreed = true
                    open(&connections[i])
                }
            }
            guard slotFreed else { continue }
            for i in connections.indices where connections[i].socket == nil { open(&connections[i]) }
        }
        lock.withLock { heldNow = 0 }
    }

    private func open(_ connection: inout Connection) {
        guard let socket = try? RawSocket(port: port, source: connection.source) else { return }
        socket.send(RelayDialer(node: "intruder", key: [], nonce: RelayNonce.draw()).hello)
        connection.socket = socket
        lock.withLock { openedSoFar += 1 }
    }
}
