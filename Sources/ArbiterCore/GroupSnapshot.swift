/// A group's line in a JOIN snapshot when its policy has state to show: a queue's
/// waiting sessions, or a buzzer's round and its ranking.
public struct GroupSnapshot: Sendable, Equatable {
    public var group: String
    public var policy: GroupPolicy
    /// Queue: who waits, in order (position 1 first).
    public var waiting: [WaitingSnapshot]
    /// Buzzer: the round's state and ranking (rank 1 first).
    public var round: RoundState?
    public var ranking: [Ranking]

    public init(group: String, policy: GroupPolicy, waiting: [WaitingSnapshot] = [], round: RoundState? = nil, ranking: [Ranking] = []) {
        self.group = group
        self.policy = policy
        self.waiting = waiting
        self.round = round
        self.ranking = ranking
    }
}
