/// The state a JOIN returns: every button, the member count, the last fence and seq.
public struct PanelSnapshot: Sendable, Equatable {
    public var buttons: [ButtonSnapshot]
    public var members: Int
    /// The last fence handed out (0 if none yet).
    public var fence: UInt64
    /// The last event the snapshot already contains.
    public var seq: UInt64
    /// The queue and buzzer groups, in the order their first button appears.
    public var groups: [GroupSnapshot]
    /// Cluster mode: the leader's term the snapshot belongs to (`OK JOIN ... term=`).
    /// Nil on a single node, whose output has no `term=`.
    public var term: Int64?
    /// The joiner of a panel above `PanelConfig.presenceSummaryAbove` members: its own
    /// `JOINED` is told to it alone, right after the snapshot and outside the seq chain
    /// (the others count it in a `PRESENCE`). Nil when the JOINED is an event.
    public var joiner: Joiner?

    public struct Joiner: Sendable, Equatable {
        public var name: String
        public var session: SessionID

        public init(name: String, session: SessionID) {
            self.name = name
            self.session = session
        }
    }

    public init(buttons: [ButtonSnapshot], members: Int, fence: UInt64, seq: UInt64, groups: [GroupSnapshot] = [], term: Int64? = nil) {
        self.term = term
        self.buttons = buttons
        self.members = members
        self.fence = fence
        self.seq = seq
        self.groups = groups
    }
}
