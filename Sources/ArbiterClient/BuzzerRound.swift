/// A `buzzer` group's round: `closed`, `armed` or `won`, and the presses ranked behind
/// the winner.
public struct BuzzerRound: Sendable, Equatable {
    /// One ranked press: the winner is rank 1.
    public struct Rank: Sendable, Equatable {
        public let button: String
        public let name: String
        public let session: String
        public let rank: Int
        public let afterMicroseconds: UInt64
    }

    public let group: String
    public var state: String
    public var ranks: [Rank]

    public init(group: String, state: String, ranks: [Rank] = []) {
        self.group = group
        self.state = state
        self.ranks = ranks
    }
}
