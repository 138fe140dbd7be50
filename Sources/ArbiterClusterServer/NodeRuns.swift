import ArbiterCluster
import ArbiterIO
import ArbiterServer
import Synchronization

/// The runs of other nodes' processes heard from (`RelayIncarnations`). A new run of a
/// node (a restarted process, or one come back under a new lease after a lapse) ends
/// every session of the old one (`reason=disconnect`, as a dead node's) on every panel
/// (`replaced`), handed to each panel's queue before the new run's frame can be: the
/// queues run in order, so the new run's sessions, which may reuse the old numbers, start
/// clean. Any thread.
final class NodeRuns: @unchecked Sendable {
    private let table = Locked(RelayIncarnations())
    private let log: ServerLog
    /// Every panel ends the sessions of `node`'s old run. Called under the table's lock,
    /// so that a frame of the new run on another link cannot overtake it. Set once, by the
    /// owner's init.
    var replaced: @Sendable (_ node: String) -> Void = { _ in }
    /// Runs replaced so far, counted under the table's lock: only a replacement retires a
    /// run, so a frame admitted while the count stood still needs no look-up (a String key
    /// under the lock, about 300 instructions per relayed command).
    private let replacements = Atomic<UInt64>(0)

    /// What `isRetired(_:of:admitted:)` compares with; read before `admit`.
    var replacementCount: UInt64 { replacements.load(ordering: .acquiring) }

    init(log: ServerLog) { self.log = log }

    /// Whether a frame of `run` from `node` may go on to the panels: not a retired run's.
    func admit(_ run: RelayIncarnations.Run, of node: String) -> Bool {
        let verdict = table.withLock { table -> RelayIncarnations.Verdict in
            let verdict = table.admit(run, of: node)
            if case .replaced = verdict {
                replacements.add(1, ordering: .releasing)
                replaced(node)
            }
            return verdict
        }
        switch verdict {
        case .first, .current:
            return true
        case .replaced(let previous):
            log.info(
                "node restarted or lapsed: its old sessions end",
                ["node": node, "old": "\(previous.incarnation)/\(previous.lease)", "new": "\(run.incarnation)/\(run.lease)"])
            return true
        case .retired:
            return false
        }
    }

    /// Whether `run` of `node` was replaced; `admitted`: `replacementCount` read before
    /// the frame was admitted, when it was.
    func isRetired(_ run: RelayIncarnations.Run, of node: String, admitted: UInt64? = nil) -> Bool {
        if let admitted, replacementCount == admitted { return false }
        return table.withLock { $0.isRetired(run, of: node) }
    }

    func isCurrent(lease: Int64, of node: String) -> Bool { table.withLock { $0.isCurrent(lease: lease, of: node) } }
}
