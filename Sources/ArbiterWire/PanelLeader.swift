/// The `leader=` field of a `PANEL` line, which only cluster mode has.
public enum PanelLeader: Sendable, Equatable {
    /// A single node: no field, so its lines stay byte for byte what they always were.
    case singleNode
    /// Cluster mode: the node that leads the panel as this node last saw it in etcd; nil
    /// while none is known (a failover under way): `leader=-`, `"leader":null`.
    case cluster(String?)
}
