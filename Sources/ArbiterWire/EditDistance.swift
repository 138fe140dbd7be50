/// How many single-byte edits turn one word into another, counting a swap of two
/// neighbours as one (`dwon` is one slip from `DOWN`, not two): the optimal string
/// alignment form of Damerau-Levenshtein, which is all a typo hint needs.
enum EditDistance {
    /// The distance, or nil once it is certainly above `limit` (a peer's unknown word
    /// may be long; most candidates are then ruled out by length alone).
    static func bounded(_ a: [UInt8], _ b: [UInt8], limit: Int) -> Int? {
        guard abs(a.count - b.count) <= limit else { return nil }
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var beforePrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            var rowBest = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var d = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    d = min(d, beforePrevious[j - 2] + 1)
                }
                current[j] = d
                rowBest = min(rowBest, d)
            }
            // Every later row only grows from this one's best.
            if rowBest > limit { return nil }
            (beforePrevious, previous, current) = (previous, current, beforePrevious)
        }
        return previous[b.count] <= limit ? previous[b.count] : nil
    }
}
