import ArbiterCore
import ArbiterHooks
import ArbiterIO
import ArbiterWire

/// What cluster mode adds to a running server (`ArbiterClusterServer.ClusterContext`):
/// the start-up checks, the node's lifetime, the connections handed over to its relay,
/// the write-time check of output made under its lease, and the answers that need other
/// nodes (who leads a panel, KICK of a session on another node). A single node has none.
package protocol ServerCluster: AnyObject, Sendable {
    /// This node's name.
    var node: String { get }
    /// Where this node numbers its own sessions: `sessionBase + 1, + 2, ...`.
    var sessionBase: Int { get }
    /// How long a connection's reply may be owed before it is given up.
    var owedReplyLimitMs: Int64 { get }

    /// The panels, once made: each gets its role (`PanelHost.role`). `kick` closes one of
    /// this node's sessions for another node's admin.
    func attach(_ panels: [PanelHost], kick: @escaping @Sendable (SessionID, String?, SessionID) -> KickOutcome)
    /// Before listening: agree the config with the cluster and seed its fences.
    func prepare(panels: [PanelConfig], journalFences: [String: UInt64]) throws
    /// After listening, before serving: refuses a node that others cannot reach. Returns
    /// the clients' connections accepted meanwhile.
    func checkReachable(listener: (fd: Int32, port: UInt16), host: String) throws -> [(fd: Int32, peer: String)]
    func start()
    /// With `resign`, every panel is handed over at once; without, the node goes quiet.
    func stop(resign: Bool)
    /// Closes the relay links, after the panels stopped.
    func stopRelay()

    /// A connection whose first bytes are another node's relay handshake. On a reactor's
    /// queue: returns at once.
    func adoptRelay(fd: Int32, peer: String, firstBytes: [UInt8])
    /// Whether output a decision made under `epoch` (`PanelRole.markDecisionOutput`) may
    /// still be written; `markedAtMs` as `EventLoop.outputStands` has it.
    func outputStands(_ epoch: UInt64, markedAtMs: Int64) -> Bool

    /// The nodes a kiosk may fail over to, by name.
    func nodes() -> [(node: String, address: String)]
    /// Asks `leader` for `panel`'s state; `done` gets its JSON on some other queue. Nil:
    /// it cannot be asked. `forgetStateQuery` drops an unanswered question.
    func queryState(of panel: String, leader: String, address: String?, done: @escaping @Sendable ([UInt8]) -> Void) -> UInt64?
    func forgetStateQuery(_ id: UInt64)
    /// `KICK` of `target`, which is not connected here: false when no other node can
    /// have it (the caller answers `no-such-session`); else the answer is written later,
    /// in a reply slot of `admin`'s.
    func kickElsewhere(_ target: SessionID, by admin: Connection, format: WireFormat, id: CommandID?) -> Bool
    /// Where hooked panels keep their pending deliveries (etcd), so that a panel's next
    /// leader finishes what this node could not.
    var hookPersistence: any HookPersistence { get }
    /// The cluster's series for `/metrics`.
    func writeMetrics(into page: inout PrometheusText)
}

/// What a server in cluster mode is configured with (`ServerConfiguration.cluster`):
/// it makes the node's `ServerCluster` when the server starts.
package protocol ServerClusterSetup: Sendable {
    func makeCluster(log: ServerLog, idleSpinNs: Int64) -> any ServerCluster
}

/// `ServerConfiguration.cluster`'s storage.
final class ClusterSetupBox: Sendable {
    let setup: any ServerClusterSetup

    init(_ setup: any ServerClusterSetup) { self.setup = setup }
}
