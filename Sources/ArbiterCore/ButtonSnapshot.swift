/// One `BUTTON` line of a JOIN snapshot.
public struct ButtonSnapshot: Sendable, Equatable {
    public enum State: String, Sendable {
        case idle
        /// This button is the group's active one.
        case pressed
        /// Another button of its group is active.
        case locked
    }

    public var button: Int
    public var state: State
    /// The group's owner while pressed or locked.
    public var owner: String?
    /// Hold progress in permille; 0 for other kinds.
    public var permille: Int
    /// The owner's session while pressed or locked: two sessions may share a name.
    public var ownerSession: SessionID?

    public init(button: Int, state: State, owner: String?, permille: Int, ownerSession: SessionID? = nil) {
        self.button = button
        self.state = state
        self.owner = owner
        self.permille = permille
        self.ownerSession = ownerSession
    }
}
