import ArbiterCore
import ArbiterWire

/// The panels' configuration in a canonical text form, which the first node puts into etcd
/// (`ClusterKeys.config`) and every later node compares with its own, so nodes with
/// different `--config` files cannot serve one cluster with different rules.
///
/// One line per field, `path value`, in config order (the order of panels and buttons is
/// visible to clients), every field written even at its default, values as JSON literals:
///
///     arbiter-config 1
///     cluster-key "hmac:5f0c…"
///     panels[0].id "demo"
///     panels[0].buttons[1].hold_ms 3000
///
/// Panel keys and hook secrets are written as HMAC-SHA256 under `--cluster-key`, never in
/// clear: etcd's readers learn nothing of them, and nobody can guess one offline from the
/// stored form without the cluster key too.
///
/// Groups with a policy of their own are written by name (`panels[0].groups.quiz.policy
/// "buzzer"`), with every field of the policy; exclusive groups, the default, are not.
///
/// The line after the header is a check value of the cluster key itself (`keyCheckPath`).
/// A node started with another key file would otherwise agree on a config without panel
/// keys, win leadership of panels whose relay links every other node then refuses (the
/// handshake proves the key), and leave those panels unusable from every other node.
public struct ClusterConfig: Equatable, Sendable {
    public static let header = "arbiter-config 1"
    static let keyCheckPath = "cluster-key"
    /// Marks a stored form that describes groups' policies. A config stored by a build
    /// without them is compared without this node's group lines, so a rolling upgrade
    /// agrees; once the cluster's config is stored by this build, groups are compared too.
    static let groupsMarkPath = "groups-described"

    public let lines: [String]

    public init(panels: [PanelConfig], clusterKey: [UInt8]) {
        var lines = [ClusterConfig.header]
        /// A secret as stored: `"hmac:<hex>"` under the cluster key, or null.
        func hmac(_ message: [UInt8]?) -> String {
            message.map { "\"hmac:\(ClusterConfig.hex(HMACSHA256.mac(key: clusterKey, message: $0)))\"" } ?? "null"
        }
        lines.append("\(ClusterConfig.keyCheckPath) \(hmac(Array("arbiter-cluster-key-check".utf8)))")
        lines.append("\(ClusterConfig.groupsMarkPath) 1")
        func add(_ path: String, _ text: String) {
            var out: [UInt8] = []
            JSONString.append(text, to: &out)
            lines.append("\(path) \(String(decoding: out, as: UTF8.self))")
        }
        for (p, panel) in panels.enumerated() {
            let path = "panels[\(p)]"
            add("\(path).id", panel.id)
            add("\(path).title", panel.title)
            for (name, key) in [("view", panel.keys.view), ("press", panel.keys.press), ("admin", panel.keys.admin)] {
                lines.append("\(path).keys.\(name) \(hmac(key.map { Array("arbiter-panel-key\0\($0)".utf8) }))")
            }
            // Written only when set, so that the stored form of every config written
            // before the field existed stays the same, and a rolling upgrade agrees.
            if panel.presenceSummaryAbove != PanelConfig.defaultPresenceSummaryAbove {
                lines.append("\(path).presence_summary_above \(panel.presenceSummaryAbove)")
            }
            for name in panel.groups.keys.sorted() {
                let gp = "\(path).groups.\(name)"
                switch panel.policy(ofGroup: name) {
                case .exclusive:
                    // What every group not described is: no line, as for those.
                    continue
                case .queue(let maxQueue):
                    add("\(gp).policy", "queue")
                    lines.append("\(gp).max_queue \(maxQueue)")
                case .buzzer(let earlyLockoutMs, let announce, let decisionWindowUs):
                    add("\(gp).policy", "buzzer")
                    lines.append("\(gp).early_lockout_ms \(earlyLockoutMs)")
                    lines.append("\(gp).announce \(announce)")
                    lines.append("\(gp).decision_window_us \(decisionWindowUs)")
                }
            }
            // Only for hooked panels, so a hook-less cluster's stored form is unchanged.
            // Every node signs what it delivers as leader: the secrets must be the same,
            // and only their HMAC is written, as the panel keys' is.
            for (h, hook) in panel.hooks.enumerated() {
                let hp = "\(path).hooks[\(h)]"
                add("\(hp).url", hook.url)
                add("\(hp).events", hook.events.joined(separator: ","))
                lines.append("\(hp).buttons \(hook.buttons.map { "[\($0.map(String.init).joined(separator: ","))]" } ?? "null")")
                lines.append("\(hp).secret \(hmac(hook.secret.map { Array("arbiter-hook-secret\0".utf8) + $0 }))")
                lines.append("\(hp).timeout_ms \(hook.timeoutMs)")
                lines.append("\(hp).max_age_s \(hook.maxAgeS)")
                lines.append("\(hp).max_pending \(hook.maxPending)")
            }
            for (b, button) in panel.buttons.enumerated() {
                let bp = "\(path).buttons[\(b)]"
                add("\(bp).id", button.id)
                add("\(bp).label", button.label)
                add("\(bp).kind", button.kind.rawValue)
                add("\(bp).group", button.group)
                lines.append("\(bp).timeout_ms \(button.timeoutMs)")
                lines.append("\(bp).hold_ms \(button.holdMs)")
                lines.append("\(bp).progress_ms \(button.progressMs)")
                lines.append("\(bp).long_ms \(button.longMs)")
                lines.append("\(bp).min_talk_ms \(button.minTalkMs)")
            }
        }
        self.lines = lines
    }

    /// Reads the stored form back; nil if it is not one.
    public init?(text: String) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.first == ClusterConfig.header else { return nil }
        self.lines = lines
    }

    public var text: String { lines.joined(separator: "\n") }

    /// SHA-256 of the stored form, in hex: what logs and `/arbiter/config`'s readers compare.
    public var digest: String { ClusterConfig.hex(SHA256.hash(text.utf8)) }

    /// The first field where `self` (this node's) and `cluster` (etcd's) differ, for the
    /// refusal: `panels[0].buttons[1].hold_ms 3000 vs 2000`. Nil when they are equal.
    /// The key check is not a field (`refusal` reports it first, and a config stored by a
    /// build without it is compared on its fields alone).
    public func firstDifference(from cluster: ClusterConfig) -> String? {
        let describesGroups = cluster.lines.contains { Self.split($0).path == Self.groupsMarkPath }
        let lines = describesGroups ? self.fields : self.fields.filter { !Self.split($0).path.contains(".groups.") }
        let clusterLines = cluster.fields
        for i in 0..<max(lines.count, clusterLines.count) {
            let mine = i < lines.count ? Self.split(lines[i]) : nil
            let theirs = i < clusterLines.count ? Self.split(clusterLines[i]) : nil
            switch (mine, theirs) {
            case (let m?, let t?) where m == t:
                continue
            case (let m?, let t?) where m.path == t.path:
                if m.path.contains(".keys.") || m.path.hasSuffix(".secret") { return "\(m.path) differs" }
                return "\(m.path) \(m.value) vs \(t.value)"
            case (let m?, let t?) where m.path.contains(".groups.") || t.path.contains(".groups."):
                return "\(m.path) vs \(t.path) (a group's policy is described on one side only)"
            case (let m?, let t?):
                // A field exists on one side only: a panel or button more or fewer.
                return "\(m.path) vs \(t.path) (a panel or button is missing on one side)"
            case (let m?, nil):
                return "\(m.path) is not in the cluster's config"
            case (nil, let t?):
                return "\(t.path) is missing from this node's config"
            case (nil, nil):
                return nil
            }
        }
        return nil
    }

    /// The refusal a node logs before exiting when its key or config is not the cluster's.
    /// A wrong key comes first: under it every panel key would differ as well.
    public func refusal(node: String, cluster: ClusterConfig) -> String? {
        if let theirs = cluster.keyCheck, theirs != keyCheck {
            return "node \(node)'s --cluster-key is not the cluster's: its check value differs from the one the cluster's first node "
                + "stored in etcd (/arbiter/config); give this node the key file the other nodes use (to change the key of a "
                + "cluster, stop every node and `etcdctl del /arbiter/config` first)"
        }
        return firstDifference(from: cluster).map { "node \(node)'s config differs from the cluster's: \($0)" }
    }

    /// The key check line's value; nil in a config stored by a build without it.
    var keyCheck: String? {
        lines.lazy.compactMap { line -> String? in
            let (path, value) = Self.split(line)
            return path == Self.keyCheckPath ? value : nil
        }.first
    }

    private var fields: [String] {
        lines.filter {
            let path = Self.split($0).path
            return path != Self.keyCheckPath && path != Self.groupsMarkPath
        }
    }

    private static func split(_ line: String) -> (path: String, value: String) {
        guard let space = line.firstIndex(of: " ") else { return (line, "") }
        return (String(line[..<space]), String(line[line.index(after: space)...]))
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] })
    }
}

extension ClusterConfig {
    /// The first node's put, create iff absent; every other node's read of what is there.
    public func publishTxn(keys: ClusterKeys) -> EtcdTxn {
        EtcdTxn(
            compare: [.createRevision(keys.config, .equal, 0)],
            success: [.put(keys.config, text)],
            failure: [.range(keys.config)])
    }

    /// What `publishTxn`'s answer means for this node: nil if it may join (it published,
    /// or the cluster's config is its own), else the refusal to log before exiting.
    public func verdict(on answer: EtcdTxnResponse, node: String) -> String? {
        if answer.succeeded { return nil }
        guard let stored = answer.rangeResult(0).first else {
            return "node \(node) could not read the cluster's config: it vanished; try again"
        }
        guard let cluster = ClusterConfig(text: stored.valueText) else {
            return "node \(node) cannot read the cluster's config (not a \(ClusterConfig.header) text)"
        }
        return refusal(node: node, cluster: cluster)
    }
}
