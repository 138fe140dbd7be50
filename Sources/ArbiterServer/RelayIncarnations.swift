/// The runs of other nodes' processes a leader has heard from. A node killed and started
/// again at once numbers its sessions from where the dead process did, so a relayed
/// session is only known by (node, incarnation, session): each process draws a random
/// 64-bit incarnation at start (`ClusterSetup.incarnation`) and sends it in every
/// `command` and `sessionGone` frame.
///
/// When a node's frames come with a new incarnation, the older run is over: the caller
/// ends every session of that node before the new frame reaches a panel. Frames of an
/// older run still in flight (on the dead process's link, read after the new one's) are
/// dropped: their sessions are gone, and their numbers may be the new run's.
struct RelayIncarnations {
    enum Verdict: Equatable {
        /// The first run heard of from this node.
        case first
        /// The run heard of last.
        case current
        /// A new run: `previous` is over.
        case replaced(previous: UInt64)
        /// A run that was replaced: drop the frame.
        case retired
    }

    private struct Runs {
        var current: UInt64
        /// The newest last; a few are enough, since a process is replaced at most once
        /// per restart and a dead one's frames drain within moments.
        var retired: [UInt64] = []
    }

    static let retiredKept = 16
    private var nodes: [String: Runs] = [:]

    /// Records a frame of `incarnation` from `node` and says what it means.
    mutating func admit(_ incarnation: UInt64, of node: String) -> Verdict {
        guard var runs = nodes[node] else {
            nodes[node] = Runs(current: incarnation)
            return .first
        }
        if runs.current == incarnation { return .current }
        if runs.retired.contains(incarnation) { return .retired }
        let previous = runs.current
        runs.retired.append(previous)
        if runs.retired.count > RelayIncarnations.retiredKept { runs.retired.removeFirst() }
        runs.current = incarnation
        nodes[node] = runs
        return .replaced(previous: previous)
    }

    /// Whether `incarnation` of `node` was replaced by a newer run.
    func isRetired(_ incarnation: UInt64, of node: String) -> Bool {
        nodes[node]?.retired.contains(incarnation) ?? false
    }
}
