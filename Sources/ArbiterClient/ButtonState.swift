/// One button of a panel: its configuration and who holds it.
public struct ButtonState: Sendable, Equatable {
    public let id: String
    /// `tap`, `hold` or `talk`.
    public let kind: String
    public let group: String
    /// `queue` or `buzzer` for a group with such a policy, nil for an exclusive one.
    public let policy: String?
    public var phase: ButtonPhase
    /// The owner of the button (pressed) or of its group (locked).
    public var owner: String?
    public var ownerSession: String?
    /// The grant's fence, once an event has named it (snapshots carry none).
    public var fence: UInt64?
    /// A hold's progress, 0 to 1.
    public var progress: Double

    public init(
        id: String, kind: String, group: String, policy: String? = nil, phase: ButtonPhase = .idle, owner: String? = nil,
        ownerSession: String? = nil, fence: UInt64? = nil, progress: Double = 0
    ) {
        self.id = id
        self.kind = kind
        self.group = group
        self.policy = policy
        self.phase = phase
        self.owner = owner
        self.ownerSession = ownerSession
        self.fence = fence
        self.progress = progress
    }
}
