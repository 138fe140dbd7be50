/// A session waiting in a `queue` group's line.
public struct WaitingPress: Sendable, Equatable {
    public let button: String
    public let name: String
    public let session: String
    public var position: Int

    public init(button: String, name: String, session: String, position: Int) {
        self.button = button
        self.name = name
        self.session = session
        self.position = position
    }
}
