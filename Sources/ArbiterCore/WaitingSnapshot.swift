/// One session waiting in a queue, as a snapshot shows it.
public struct WaitingSnapshot: Sendable, Equatable {
    public var button: Int
    public var name: String
    public var session: SessionID
    public var position: Int

    public init(button: Int, name: String, session: SessionID, position: Int) {
        self.button = button
        self.name = name
        self.session = session
        self.position = position
    }
}
