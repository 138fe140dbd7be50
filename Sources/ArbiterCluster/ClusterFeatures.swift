/// What a node's relay understands beyond the frames every version reads, announced in
/// etcd at `/arbiter/nodes/<node>/features` (space-separated names) under the node's
/// lease. A node closes a relay link on a frame type it does not know, so a newer frame
/// goes only to a node that announced it: during a rolling upgrade an upgraded node
/// cannot cut its links to the nodes not upgraded yet. The announcement has a key of its
/// own because older nodes read the registration's value as the bare address and skip
/// keys below `/arbiter/nodes/<node>/` (`ClusterKeys.node(ofKey:)`).
public enum ClusterFeatures {
    /// `RelayMessage.stateQuery` and `.stateAnswer`: the leader answers for its panel's
    /// state, so `GET /api/panels` on any node shows what the leader has.
    public static let panelState = "panel-state"

    /// `RelayMessage.kick` and `.kickAnswer`: an admin on any node may `KICK` a session on
    /// this one.
    public static let kick = "kick"

    /// `RelayMessage.grantEnded`: the leader tells this node of its sessions' grants that
    /// timed out, fired or were reset while it had no member of the panel.
    public static let grantEnded = "grant-ended"

    /// `RelayMessage.typedEvent`: events come with what a follower must know of them as
    /// fields beside their rendered lines. A node that did not announce it gets `event`.
    public static let typedEvents = "typed-events"

    /// What this version announces.
    public static let all: Set<String> = [panelState, kick, grantEnded, typedEvents]

    /// The key's value for `features`, in a fixed order.
    public static func value(_ features: Set<String>) -> String { features.sorted().joined(separator: " ") }

    /// The names in a key's value; unknown ones are kept (a newer node's), empty words skipped.
    public static func parse(_ value: String) -> Set<String> { Set(value.split(separator: " ").map(String.init)) }
}
