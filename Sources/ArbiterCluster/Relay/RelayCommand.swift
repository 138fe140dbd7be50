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

    public init(origin: String, session: UInt64, sessionName: String, key: String?, panel: String, command: [UInt8], arrivedAt: Int64) {
        self.origin = origin
        self.session = session
        self.sessionName = sessionName
        self.key = key
        self.panel = panel
        self.command = command
        self.arrivedAt = arrivedAt
    }
}
