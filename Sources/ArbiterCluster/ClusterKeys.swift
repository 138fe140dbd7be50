/// The etcd key layout. Everything lives under one prefix, so one etcd can serve several
/// clusters and `etcdctl get --prefix /arbiter/` shows the whole state.
///
///     /arbiter/nodes/<node>           advertise address; under the node's lease
///     /arbiter/nodes/<node>/features  what its relay understands (ClusterFeatures); under the node's lease
///     /arbiter/panels/<p>/leader      leading node's name; under its lease; term = create_revision
///     /arbiter/panels/<p>/fence       highest fence ever reserved, decimal; no lease, never deleted
///     /arbiter/config                 the panels' config in ClusterConfig's canonical form; no lease
///     /arbiter/hooks/<p>/<i>/<id>     a hook's pending delivery (`webhook-id` <id>); no lease, deleted once done
public struct ClusterKeys: Equatable, Sendable {
    public var root: String

    public init(root: String = "/arbiter") {
        self.root = root
    }

    public var nodes: String { "\(root)/nodes/" }
    public var panels: String { "\(root)/panels/" }

    public func node(_ name: String) -> String { "\(root)/nodes/\(name)" }
    public func features(_ name: String) -> String { "\(root)/nodes/\(name)/features" }
    public func leader(_ panel: String) -> String { "\(root)/panels/\(panel)/leader" }
    public func fence(_ panel: String) -> String { "\(root)/panels/\(panel)/fence" }
    public var config: String { "\(root)/config" }
    /// Not under `panels`: the runtime watches that prefix, and every hooked event would
    /// wake every node's step.
    public func hooks(_ panel: String) -> String { "\(root)/hooks/\(panel)/" }
    /// `hook` is `<panel>/<index>` (`HookRunner.key`).
    public func hook(_ hook: String, id: String) -> String { "\(root)/hooks/\(hook)/\(id)" }

    /// The panel whose election key `key` is, if it is one.
    public func panel(ofLeaderKey key: String) -> String? {
        guard key.hasPrefix(panels), key.hasSuffix("/leader") else { return nil }
        let name = key.dropFirst(panels.count).dropLast("/leader".count)
        return name.isEmpty || name.contains("/") ? nil : String(name)
    }

    /// The node whose feature announcement `key` is, if it is one.
    public func node(ofFeaturesKey key: String) -> String? {
        guard key.hasPrefix(nodes), key.hasSuffix("/features") else { return nil }
        let name = key.dropFirst(nodes.count).dropLast("/features".count)
        return name.isEmpty || name.contains("/") ? nil : String(name)
    }

    /// The node whose registration `key` is, if it is one.
    public func node(ofKey key: String) -> String? {
        guard key.hasPrefix(nodes) else { return nil }
        let name = key.dropFirst(nodes.count)
        return name.isEmpty || name.contains("/") ? nil : String(name)
    }
}
