/// The runs of other nodes' processes a leader has heard from. A node killed and started
/// again at once numbers its sessions from where the dead process did, so a relayed
/// session is only known by (node, run, session). A run is one process (a random 64-bit
/// incarnation drawn at start, `ClusterSetup.incarnation`) under one etcd lease: a node
/// whose lease lapsed ended everything its sessions held (failover releases to its
/// members) and comes back under a new lease, which is a new run too. Both travel in
/// every `command` and `sessionGone` frame.
///
/// When a node's frames come from a new run, the older run is over: the caller ends every
/// session of that node before the new frame reaches a panel. Frames of an older run
/// still in flight (on the dead process's link, read after the new one's) are dropped:
/// their sessions are gone, and their numbers may be the new run's. And the registration
/// of a replaced lease vanishing from etcd later ends nothing more (`isCurrent`).
struct RelayIncarnations {
    struct Run: Equatable {
        var incarnation: UInt64
        /// 0: relayed before the node had a lease (a node starting up); the first lease
        /// heard of in that process completes it rather than replacing it.
        var lease: Int64
    }

    enum Verdict: Equatable {
        /// The first run heard of from this node.
        case first
        /// The run heard of last.
        case current
        /// A new run: `previous` is over.
        case replaced(previous: Run)
        /// A run that was replaced: drop the frame.
        case retired
    }

    private struct Runs {
        var current: Run
        /// The newest last; a few are enough, since a run is replaced at most once per
        /// restart or lapse and a replaced one's frames drain within moments.
        var retired: [Run] = []
    }

    static let retiredKept = 16
    private var nodes: [String: Runs] = [:]

    /// Records a frame of `run` from `node` and says what it means.
    mutating func admit(_ run: Run, of node: String) -> Verdict {
        guard var runs = nodes[node] else {
            nodes[node] = Runs(current: run)
            return .first
        }
        if runs.current.incarnation == run.incarnation {
            if runs.current.lease == run.lease || run.lease == 0 { return .current }
            if runs.current.lease == 0 {
                runs.current.lease = run.lease
                nodes[node] = runs
                return .current
            }
        }
        if isRetired(run, in: runs) { return .retired }
        let previous = runs.current
        runs.retired.append(previous)
        if runs.retired.count > RelayIncarnations.retiredKept { runs.retired.removeFirst() }
        runs.current = run
        nodes[node] = runs
        return .replaced(previous: previous)
    }

    /// Whether `run` of `node` was replaced by a newer run.
    func isRetired(_ run: Run, of node: String) -> Bool {
        nodes[node].map { isRetired(run, in: $0) } ?? false
    }

    /// Whether the registration of `node` under `lease` is the run heard of last, or
    /// nothing was heard from the node under any lease: its vanishing then ends the
    /// node's sessions. Once a newer run was heard of, the old one's sessions were ended
    /// at that moment, and ending the node's sessions again would end the new run's.
    func isCurrent(lease: Int64, of node: String) -> Bool {
        guard let current = nodes[node]?.current, current.lease != 0 else { return true }
        return current.lease == lease
    }

    private func isRetired(_ run: Run, in runs: Runs) -> Bool {
        // A process replaced is retired under every lease; within the current process a
        // lease is retired once a newer one was heard of.
        runs.retired.contains { $0.incarnation == run.incarnation && ($0.lease == run.lease || $0.incarnation != runs.current.incarnation) }
    }
}
