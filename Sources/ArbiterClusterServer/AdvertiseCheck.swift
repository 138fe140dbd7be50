import ArbiterServer
import ArbiterCluster
import ArbiterClusterRuntime
import ArbiterIO
import Glibc

/// Whether `--advertise` reaches this very node, checked once at start: after the port is
/// listening, before the node takes part in any election. A node advertised at an address
/// that leads nowhere (a typo, `--host 127.0.0.1` with a LAN address advertised, every node
/// given the first one's address) still won its share of the panels, and every other
/// node's clients were then answered `ERROR unavailable` for those panels, for as long as
/// it ran, while its own log said nothing (found by hand: `--advertise 127.0.0.1:1`).
///
/// A probe connects to the advertised address and writes a line with a random nonce; the
/// listener's new connections are peeked at (`MSG_PEEK`, nothing consumed) until one
/// carries it. That works through whatever forwards the address to this port (a NAT, a
/// proxy, a tunnel). Connections of real clients accepted meanwhile are handed back
/// untouched (`others`) for the server to adopt.
struct AdvertiseCheck {
    enum Outcome: Equatable {
        case reachesThisNode
        /// The connect itself failed: nothing listens there, or it is not reachable from here.
        case unreachable(String)
        /// Something else took the connection: what it said or did.
        case reachesSomethingElse(String)
    }

    let address: RelayAddress
    let listener: Int32
    let timeoutMs: Int
    /// Connections accepted during the check that were not the probe.
    private(set) var others: [(fd: Int32, peer: String)] = []

    init(address: RelayAddress, listener: Int32, timeoutMs: Int = 3_000) {
        self.address = address
        self.listener = listener
        self.timeoutMs = timeoutMs
    }

    mutating func run() -> Outcome {
        // Relay links dial addresses as given, never resolving a name (as everywhere else
        // in the server): a name here would never have been reached by any node.
        guard HostLiteral(address.host) != nil else {
            return .unreachable("\(address.host) is a name, and nodes reach each other by IP address only: advertise this node's IP address")
        }
        let probe: Int32
        switch Sys.connect(host: address.host, port: address.port) {
        case .failure(let failure): return .unreachable(failure.description)
        case .success(let fd): probe = fd
        }
        defer { Sys.close(probe) }
        let deadline = SystemClock.monotonic.milliseconds() + Int64(timeoutMs)
        guard wait(for: probe, Int16(POLLOUT), until: deadline) else {
            return .unreachable("connect \(address.host):\(address.port): no answer within \(timeoutMs) ms")
        }
        let error = Sys.pendingError(probe)
        guard error == 0 else { return .unreachable(Sys.Failure(call: "connect \(address.host):\(address.port)", errno: error).reason) }
        let nonce = Array("ARBITER-ADVERTISE-CHECK \(RelayProof.hex(RelayNonce.draw()))\n".utf8)
        guard case .bytes(nonce.count) = nonce.withUnsafeBytes({ Sys.write(probe, $0) }) else {
            return .reachesSomethingElse("the connection took the probe's line only in part")
        }
        var pending: [(fd: Int32, peer: String)] = []
        defer { others += pending }
        while SystemClock.monotonic.milliseconds() < deadline {
            var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0), pollfd(fd: probe, events: Int16(POLLIN), revents: 0)]
            fds += pending.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            let left = Int32(clamping: max(1, deadline - SystemClock.monotonic.milliseconds()))
            guard Glibc.poll(&fds, nfds_t(fds.count), min(left, 50)) >= 0 || errno == EINTR else { break }
            if fds[1].revents != 0 {
                // This node serves nobody yet: whatever answered the probe is not it.
                let said = readLine(probe)
                return .reachesSomethingElse(said.map { "it answered '\($0)'" } ?? "it closed the connection")
            }
            var stillPending: [(fd: Int32, peer: String)] = []
            for (i, connection) in pending.enumerated() {
                guard fds[2 + i].revents != 0 else {
                    stillPending.append(connection)
                    continue
                }
                switch peek(connection.fd, for: nonce) {
                case .match:
                    Sys.close(connection.fd)
                    pending = stillPending + Array(pending[(i + 1)...])
                    return .reachesThisNode
                case .partial:
                    stillPending.append(connection)
                case .other:
                    others.append(connection)
                }
            }
            pending = stillPending
            if fds[0].revents != 0 { acceptAll(into: &pending) }
        }
        return .reachesSomethingElse("nothing it took reached this node's port within \(timeoutMs) ms")
    }

    /// Why the node refuses to start, for an outcome other than `reachesThisNode`.
    static func refusal(_ outcome: Outcome, advertise: String, port: UInt16) -> String? {
        let what: String
        switch outcome {
        case .reachesThisNode: return nil
        case .unreachable(let why): what = "connecting to it from this machine failed (\(why))"
        case .reachesSomethingElse(let why): what = "it leads somewhere else: \(why)"
        }
        return "--advertise \(advertise) does not reach this node: \(what). Other nodes relay this node's panels there, and kiosks move "
            + "there, so those panels would answer ERROR unavailable everywhere else. Advertise the address other machines reach this "
            + "node's port \(port) at (with --host 0.0.0.0 or that address), or give --no-advertise-check if this machine cannot reach "
            + "its own advertised address (a NAT without hairpin)"
    }

    /// A node that serves other machines (`--host` beyond loopback) but advertises a
    /// loopback address passes the check on its own machine, while a node elsewhere that
    /// dials that address reaches its own machine instead (by hand, three machines each
    /// given `--advertise 127.0.0.1:7070` cannot relay to each other). Said, not refused: one
    /// machine running every node with `--host 0.0.0.0` is a working setup.
    static func loopbackWarning(advertiseHost: String, listenHost: String) -> String? {
        guard let host = HostLiteral(advertiseHost)?.address, ProtectedMode.isLoopback(host), !ProtectedMode.isLoopback(listenHost) else { return nil }
        return "--advertise is a loopback address while this node serves other machines: nodes and kiosks on another machine "
            + "cannot reach it there (they would reach their own machine); advertise an address of this machine that they reach"
    }

    private func wait(for fd: Int32, _ events: Int16, until deadline: Int64) -> Bool {
        while true {
            let left = deadline - SystemClock.monotonic.milliseconds()
            guard left > 0 else { return false }
            var ready = pollfd(fd: fd, events: events, revents: 0)
            let n = Glibc.poll(&ready, 1, Int32(clamping: left))
            if n > 0 { return true }
            if n < 0 && errno != EINTR { return false }
        }
    }

    private func acceptAll(into pending: inout [(fd: Int32, peer: String)]) {
        for _ in 0..<64 {
            guard case .accepted(let fd, let peer) = Sys.accept(listener) else { return }
            pending.append((fd, peer))
        }
    }

    private enum Peeked {
        case match, partial, other
    }

    /// What a new connection has sent so far, left in its socket for whoever reads it.
    private func peek(_ fd: Int32, for nonce: [UInt8]) -> Peeked {
        var bytes = [UInt8](repeating: 0, count: nonce.count)
        let n = bytes.withUnsafeMutableBytes { recv(fd, $0.baseAddress, nonce.count, Int32(MSG_PEEK)) }
        // Closed, failed or empty: the server's own read meets it.
        guard n > 0 else { return n < 0 && errno == EAGAIN ? .partial : .other }
        guard bytes[..<n].elementsEqual(nonce[..<n]) else { return .other }
        return n == nonce.count ? .match : .partial
    }

    /// The first line `fd` offers (up to 200 bytes), nil if it closed first.
    private func readLine(_ fd: Int32) -> String? {
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 200)
        for _ in 0..<20 {
            guard case .bytes(let n) = buffer.withUnsafeMutableBytes({ Sys.read(fd, into: $0) }), n > 0 else { break }
            answer += buffer[..<n]
            if answer.contains(0x0A) || answer.count >= 200 { break }
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard Glibc.poll(&ready, 1, 100) > 0 else { break }
        }
        guard !answer.isEmpty else { return nil }
        let line = answer.prefix { $0 != 0x0A && $0 != 0x0D }.prefix(120)
        return String(decoding: line, as: UTF8.self)
    }
}
