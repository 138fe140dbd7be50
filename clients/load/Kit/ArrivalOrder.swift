/// buzz: when each player's DOWN was written and the rank it got, to count the pairs of
/// players a round ranked against the order they sent in (ranks follow arrival, whatever
/// thread read each socket).
///
/// Each DOWN is stamped just before the write that carries it (`Engine.write`), on the
/// generator's monotonic clock, so two stamps of different threads compare. A round
/// counts only when every player of the run was ranked in it, ranks 1 to n.
public struct ArrivalOrder: Sendable {
    struct Sample: Sendable {
        /// The ARMED the press answered, counted by its player from the run's start.
        var round: Int
        var sentAt: UInt64
        var rank: Int32
    }

    var samples: [Sample] = []

    public init() {}

    mutating func record(round: Int, sentAt: UInt64, rank: Int32) {
        samples.append(Sample(round: round, sentAt: sentAt, rank: rank))
    }

    mutating func merge(_ other: ArrivalOrder) { samples += other.samples }

    public struct Summary: Sendable, Equatable {
        /// Rounds with every one of the players ranked.
        public var rounds = 0
        /// Pairs of players of those rounds whose DOWNs were written at least `gap` apart,
        /// and of them, those ranked the other way round.
        public var pairs = 0
        public var inversions = 0
        /// Rounds whose winner sent at least `gap` after the first sender.
        public var winnerInversions = 0
        /// Every inverted pair, whatever its gap, and the largest gap among them: the skew
        /// left between sending and ranking.
        public var allInversions = 0
        public var largestInvertedGapNs: UInt64 = 0
        /// Inverted pairs by gap: below 10 µs, 10-100 µs, 100 µs-1 ms, 1 ms and more.
        public var invertedByGap = [0, 0, 0, 0]
    }

    /// The rounds where each of `players` was ranked once, ranks 1 to `players`.
    public func summary(players: Int, gapNs: UInt64 = 100_000) -> Summary {
        var result = Summary()
        var byRound: [Int: [Sample]] = [:]
        for sample in samples { byRound[sample.round, default: []].append(sample) }
        for (_, round) in byRound.sorted(by: { $0.key < $1.key }) {
            guard round.count == players, Set(round.map(\.rank)) == Set((1...Int32(max(players, 1))).map { $0 }) else { continue }
            result.rounds += 1
            let sent = round.sorted { $0.sentAt < $1.sentAt }
            if let winner = sent.first(where: { $0.rank == 1 }), sent[0].rank != 1, winner.sentAt - sent[0].sentAt >= gapNs {
                result.winnerInversions += 1
            }
            for i in 0..<sent.count {
                for j in (i + 1)..<sent.count {
                    let gap = sent[j].sentAt - sent[i].sentAt
                    let inverted = sent[i].rank > sent[j].rank
                    if gap >= gapNs {
                        result.pairs += 1
                        if inverted { result.inversions += 1 }
                    }
                    guard inverted else { continue }
                    result.allInversions += 1
                    result.largestInvertedGapNs = max(result.largestInvertedGapNs, gap)
                    result.invertedByGap[gap < 10_000 ? 0 : gap < 100_000 ? 1 : gap < 1_000_000 ? 2 : 3] += 1
                }
            }
        }
        return result
    }
}
