/// Who holds a grant: the fields every ownership event carries.
public struct Owner: Sendable, Equatable {
    public var name: String
    public var session: SessionID
    public var fence: UInt64

    public init(name: String, session: SessionID, fence: UInt64) {
        self.name = name
        self.session = session
        self.fence = fence
    }
}
