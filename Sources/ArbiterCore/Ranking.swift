/// One press of a buzzer round: the winner is rank 1 with `afterMicroseconds` 0.
public struct Ranking: Sendable, Equatable {
    public var button: Int
    public var name: String
    public var session: SessionID
    public var rank: Int
    /// Microseconds after the winner's arrival; never less than the rank before.
    public var afterMicroseconds: Int64

    public init(button: Int, name: String, session: SessionID, rank: Int, afterMicroseconds: Int64) {
        self.button = button
        self.name = name
        self.session = session
        self.rank = rank
        self.afterMicroseconds = afterMicroseconds
    }
}
