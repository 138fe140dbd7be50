/// A command relayed from the node a session is connected to, to the panel's leader. The
/// presented key travels with it because panel keys are enforced at the leader.
public struct RelayCommand: Equatable, Sendable {
    public var origin: String
    public var session: UInt64
    public var sessionName: String
    public var key: String?
    public var panel: String
    public var command: [UInt8]
    public var arrivedAt: Int64
    /// Which run of the origin node's process sent it (`RelayIncarnations`): a node
    /// restarted numbers its sessions from where the dead process did, so the leader
    /// tells them apart by this.
    public var incarnation: UInt64
    /// The origin's number for this command, echoed in its reply: the origin matches a
    /// reply to its command by it, not by order, so a reply lost with a link (or come after
    /// its command was already answered `ERROR unavailable`) cannot answer the next one.
    /// 0: none (replies are then matched in order).
    public var serial: UInt64
    /// The origin's etcd lease it relays under (the one its panels last synchronised
    /// under; 0: none yet). A node whose lease lapsed comes back under another one, its
    /// old grants ended, and its registration under the old lease vanishes from etcd
    /// some time later: the leader tells the two runs apart by this, so that vanishing
    /// ends only what the old lease's run held (`RelayIncarnations`).
    public var lease: Int64

    public init(
        origin: String, session: UInt64, sessionName: String, key: String?, panel: String, command: [UInt8], arrivedAt: Int64, incarnation: UInt64 = 0,
        serial: UInt64 = 0, lease: Int64 = 0
    ) {
        self.origin = origin
        self.session = session
        self.sessionName = sessionName
        self.key = key
        self.panel = panel
        self.command = command
        self.arrivedAt = arrivedAt
        self.incarnation = incarnation
        self.serial = serial
        self.lease = lease
    }
}
