import ArbiterIO
import Dispatch

/// Which other nodes this node can still count on: the relay links up to each, and the
/// registrations last read from etcd. A node whose last link went down, or whose
/// registration vanished or moved to another lease, is gone (`gone`). Any thread.
final class NodeWatch: @unchecked Sendable {
    /// Relay links up, by node (a pair of nodes may have two).
    private let linksUp = Locked<[String: Int]>([:])
    /// Nodes whose registration was seen, with the lease it is under.
    private let knownNodes = Locked<[String: Int64]>([:])
    private let node: String
    /// `node`'s links are all down (lease nil), or its registration under `lease` ended.
    /// Set once, by the owner's init, before any link or registration is seen.
    var gone: @Sendable (_ node: String, _ lease: Int64?) -> Void = { _, _ in }

    init(node: String) {
        self.node = node
    }

    /// A relay link to or from `node` came up.
    func linkUp(_ node: String) {
        linksUp.withLock { $0[node, default: 0] += 1 }
    }

    /// A relay link to or from `node` went down; when it was the last one, the node is
    /// treated as gone, unless another link is up 100 ms later (a link replaced by a newer
    /// one from the same node may be reported down before the new one is reported up).
    func linkDown(_ node: String) {
        let last = linksUp.withLock { counts -> Bool in
            let left = (counts[node] ?? 1) - 1
            counts[node] = left > 0 ? left : nil
            return left <= 0
        }
        guard last else { return }
        ClusterTimers.queue.asyncAfter(deadline: .now() + .milliseconds(100)) { [weak self] in
            guard let self, linksUp.withLock({ $0[node] == nil }) else { return }
            gone(node, nil)
        }
    }

    /// `now`: every live node's registration and its lease, as just read. One that is
    /// gone, or under another lease now (its node lapsed and registered again), ended.
    func registrationsSeen(_ now: [String: Int64]) {
        let ended = knownNodes.withLock { known -> [(String, Int64)] in
            defer { known = now }
            return known.filter { now[$0.key] != $0.value }.map { ($0.key, $0.value) }
        }
        for (node, lease) in ended where node != self.node { gone(node, lease) }
    }

    /// Relay links up (for /metrics).
    var linksUpCount: Int { linksUp.withLock { $0.values.reduce(0, +) } }
}
