import ArbiterCluster
import ArbiterCore
import ArbiterIO
import ArbiterTestSupport
import Foundation
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer
import ArbiterClusterTestSupport

/// Two or three real servers on 127.0.0.1 port 0, in cluster mode on one in-memory etcd,
/// their relay links in process. The lease is short (TTL 2 s, keepalives every 100 ms,
/// margin 300 ms) so a failover takes about two seconds; every wait is bounded, on events
/// (`Changes`).
/// It was 1 s with a 200 ms margin, but a leader starved of CPU for 800 ms while the
/// whole suite ran in parallel then lapsed, and its failover broke tests that watch one
/// leader (CI at 8a3ea6e); now it takes 1.7 s, for 4 s more over the whole suite.
final class ClusterTestNodes: @unchecked Sendable {
    static let timing = ClusterTiming(ttlSeconds: 2, keepAliveIntervalMilliseconds: 100, safetyMarginMilliseconds: 300)

    let etcd = SharedEtcd()
    let hub = TestRelayHub()
    /// Every node's log lines, each after its node's name (`LogCapture`): the tests stage
    /// unreachable leaders and dead links, whose warnings are expected.
    let log = LogCapture()
    private(set) var servers: [String: ArbiterServer] = [:]
    private(set) var ports: [String: UInt16] = [:]
    private(set) var leaseViews: [String: SharedEtcd.View] = [:]
    private(set) var controlViews: [String: SharedEtcd.View] = [:]
    /// Each node's client for its hooks' pending deliveries (`ClusterSetup.hooks`).
    private(set) var hookViews: [String: SharedEtcd.View] = [:]
    let panels: [PanelConfig]
    /// Real relay links (`RelayNetwork` on the nodes' ports) instead of the hub.
    let sockets: Bool
    let timing: ClusterTiming
    let answerTimeoutMs: Int64
    let memberGraceMs: Int64
    let joinWaitMs: Int64
    /// Nodes that announce other relay features than this version's (an older version: none).
    let features: [String: Set<String>]
    /// The clock the servers decide by (their panels', not the cluster's leases): the
    /// system's unless a test drives one by hand.
    let clock: (any TimeSource)?

    init(
        _ names: [String], panels: [PanelConfig] = [.demo], sockets: Bool = false, timing: ClusterTiming = ClusterTestNodes.timing,
        answerTimeoutMs: Int64 = 5_000, memberGraceMs: Int64 = 15_000, joinWaitMs: Int64 = 10_000, features: [String: Set<String>] = [:],
        clock: (any TimeSource)? = nil
    ) throws {
        self.clock = clock
        self.joinWaitMs = joinWaitMs
        self.features = features
        self.panels = panels
        self.sockets = sockets
        self.timing = timing
        self.answerTimeoutMs = answerTimeoutMs
        self.memberGraceMs = memberGraceMs
        for name in names { try start(name) }
    }

    deinit {
        for server in servers.values { server.stop() }
    }

    func start(_ name: String) throws {
        let lease = etcd.view()
        let control = etcd.view()
        let hooks = etcd.view()
        var configuration = ServerConfiguration()
        // With sockets, the node must know its port to advertise it before it listens.
        configuration.port = sockets ? try ClusterTestNodes.freePort() : 0
        configuration.panels = panels
        configuration.logLevel = .warning
        let sink = log.sink(prefix: "\(name) ")
        configuration.logSink = { line in
            sink(line)
            Changes.bump()
        }
        // The fence-block tests press a thousand times in one burst.
        configuration.commandsPerSecond = 0
        var setup = ClusterSetup(
            node: name, advertise: sockets ? "127.0.0.1:\(configuration.port)" : "127.0.0.1:1", key: Array("test cluster key".utf8), control: control,
            lease: lease,
            endpointsDescription: "in-memory", timing: timing, stepIntervalMilliseconds: 50, clock: SystemClock.boot)
        setup.answerTimeoutMs = answerTimeoutMs
        setup.memberGraceMs = memberGraceMs
        setup.joinWaitMs = joinWaitMs
        setup.hooks = hooks
        if let features = features[name] { setup.features = features }
        if !sockets { setup.relay = hub.sender(for: name) }
        configuration.cluster = setup
        let server = clock.map { ArbiterServer(configuration: configuration, clock: $0) } ?? ArbiterServer(configuration: configuration)
        let port = try server.start()
        guard let context = server.stateForTesting?.cluster as? ClusterContext else { throw Failure(description: "no cluster context") }
        hub.register(name, context)
        servers[name] = server
        ports[name] = port
        leaseViews[name] = lease
        controlViews[name] = control
        hookViews[name] = hooks
    }

    /// A port the kernel just gave out and took back: free unless another test grabs it.
    static func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw Failure(description: "bind: \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }

    func context(_ name: String) -> ClusterContext? { servers[name]?.stateForTesting?.cluster as? ClusterContext }

    /// The node deciding demo and one that relays to it.
    func leaderAndFollower(of panel: String = "demo") throws -> (leader: String, follower: String) {
        let leader = try #require(self.leader(of: panel), "no settled leader: \(describe(panel))")
        let follower = try #require(followers(of: leader).first)
        return (leader, follower)
    }

    /// The node deciding `panel`, once one does and every other node knows it and where
    /// it is (a node refuses to relay to a leader whose registration it has not read).
    func leader(of panel: String = "demo", seconds: Double = 10) -> String? {
        var settled: String?
        eventually(seconds: seconds) {
            settled = settledLeader(of: panel)
            return settled != nil
        }
        return settled
    }

    private func settledLeader(of panel: String) -> String? {
        let deciding = servers.keys.filter { context($0)?.runtime.canDecide(panel) != nil }
        guard deciding.count == 1, let leader = deciding.first else { return nil }
        let known = servers.keys.filter { $0 != leader }.allSatisfy { name in
            guard let host = servers[name]?.stateForTesting?.panelsByID[panel] else { return false }
            guard context(name)?.address(ofNode: leader) != nil else { return false }
            return host.queue.sync { host.clusterState.leader.node == leader }
        }
        return known ? leader : nil
    }

    /// What each node sees of `panel`, for a test that found no settled leader.
    func describe(_ panel: String) -> String {
        servers.keys.sorted().map { name in
            guard let context = context(name), let host = servers[name]?.stateForTesting?.panelsByID[panel] else { return "\(name): gone" }
            let leader = host.queue.sync { host.clusterState.leader.node }
            let address = leader.flatMap { context.address(ofNode: $0) }
            return "\(name): decides=\(context.runtime.canDecide(panel) != nil) lease=\(context.runtime.leaseID.map(String.init) ?? "none")"
                + " safe=\(context.runtime.leaseIsSafe()) lapsed=\(context.isLapsed) leader=\(leader ?? "none") address=\(address ?? "unknown")"
                + " \(context.runtime.statistics) \(context.runtime.leadershipDescription())"
        }.joined(separator: "; ") + "; last log lines: " + log.lines.suffix(20).joined(separator: " | ")
    }

    func followers(of leader: String) -> [String] { servers.keys.filter { $0 != leader }.sorted() }

    /// Whether `node` comes to hold a lease with its panels synchronised under it, within
    /// `seconds`. A leader can be settled before another node's first lease is granted:
    /// the grant waits for a thread of the keeper's concurrent queue, and under load with
    /// ASan its calls started up to 0.9 s late. Until then that node relays under no
    /// lease, and it never lapses, as nothing of a node that never registered can have
    /// been ended (`NodeLapse.check`): a test that takes a node's lease away waits for this.
    func synchronised(_ node: String, seconds: Double = 10) -> Bool {
        guard let context = context(node) else { return false }
        return eventually(seconds: seconds) { context.runtime.leaseID.map { context.synchronisedLease == $0 } ?? false }
    }

    func client(_ node: String, name: String) throws -> LineClient {
        guard let port = ports[node] else { throw Failure(description: "no node \(node)") }
        let client = try LineClient(port: port)
        client.send("HELLO \(name)")
        _ = try client.expect("OK HELLO")
        return client
    }

    /// A member of `panel` on `node`, past its JOIN reply; returns it and the reply's line.
    func member(_ node: String, name: String, panel: String = "demo") throws -> (LineClient, String) {
        let client = try self.client(node, name: name)
        client.send("JOIN \(panel)")
        let ok = try client.expect("OK JOIN")
        return (client, ok)
    }

    /// `kill -9` and a start at once: the node's process dies without a word on its links,
    /// and a new one under the same name comes up before anyone noticed.
    func restartAtOnce(_ name: String) throws {
        hub.silence(framesFrom: name, true)
        servers[name]?.stop()
        servers[name] = nil
        hub.silence(framesFrom: name, false)
        try start(name)
    }

    /// Stops `name` as a crash would: no resignation, its lease runs out.
    func crash(_ name: String) {
        // Real links go down by themselves when the node's sockets close.
        if !sockets { hub.cutOff(name) }
        servers[name]?.stop()
        servers[name] = nil
    }
}

/// `line`'s answer once `accepted` takes it (10 s at most): sent again after each change
/// in the cluster (`Changes`), not on a timer, while the answer is one the cluster gives
/// until it has settled (a panel whose core has not started yet, a node that does not
/// follow the new leader yet).
func answer(_ client: LineClient, _ line: String, until accepted: (String) -> Bool) throws -> String {
    var answer = ""
    var failure: (any Error)?
    eventually {
        client.send(line)
        do {
            answer = try client.expect("", timeout: 5)
        } catch {
            failure = error
            return true
        }
        return accepted(answer)
    }
    if let failure { throw failure }
    return answer
}

struct Failure: Error, CustomStringConvertible {
    var description: String
}

extension PanelHost {
    /// The panel's cluster-mode role, for tests that look inside it.
    var clusterPanel: ClusterPanel { role as! ClusterPanel }

    var clusterState: PanelClusterState {
        get { clusterPanel.clusterState }
        set { clusterPanel.clusterState = newValue }
    }
}
