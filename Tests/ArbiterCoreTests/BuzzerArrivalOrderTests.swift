import Testing

@testable import ArbiterCore

/// Random rounds: presses read in any order, each within the decision window of its
/// arrival, with the timer waking the core at each deadline it asks for. The ranking
/// must be the arrival order, every press answered once, none counted late.
@Suite("buzzer groups: random rounds ranked by arrival")
struct BuzzerArrivalOrderTests {
    @Test(arguments: Array(1...12) as [UInt64])
    func everyRoundIsRankedInArrivalOrder(seed: UInt64) {
        var rng = RandomizedInvariantTests.SplitMix64(state: seed)
        let windowUs: Int64 = 2000
        var h = CoreHarness(.fairPanel(windowUs: windowUs))
        h.arm("quiz")
        let start = h.now.nanoseconds + 1_000_000
        // (session, arrival, read), arrivals over 30 ms, some equal; reads up to the window late.
        var presses: [(session: Int, arrival: Int64, read: Int64)] = []
        for session in 1...40 {
            // Whole microseconds (the harness's unit); a coarse grid for some, so some tie.
            let arrival = start + (Bool.random(using: &rng) ? Int64.random(in: 0...30, using: &rng) * 1000 : Int64.random(in: 0...30_000, using: &rng)) * 1000
            presses.append((session, arrival, arrival + Int64.random(in: 0..<windowUs, using: &rng) * 1000))
        }
        presses.sort { ($0.read, $0.session) < ($1.read, $1.session) }
        var answers: [Int: [String]] = [:]
        func note(_ lines: [String], current: Int?) {
            for line in lines {
                if line.hasPrefix("answer s") {
                    let rest = line.dropFirst("answer s".count)
                    let session = Int(rest.prefix { $0.isNumber })!
                    answers[session, default: []].append(String(rest.drop { $0 != " " }.dropFirst()))
                } else if let current, line.hasPrefix("GRANTED") || line.hasPrefix("RANKED") {
                    answers[current, default: []].append(line)
                }
            }
        }
        for press in presses {
            // The timer wakes the core at each deadline before this read.
            for _ in 0..<1000 {
                guard let due = h.core.nextDeadline, due.nanoseconds <= press.read else { break }
                h.now = max(h.now, due)
                note(h.wait(0), current: nil)
            }
            h.now = Instant(nanoseconds: press.read)
            note(h.down(["red", "blue"][press.session % 2], press.session, arrivedUsAgo: (press.read - press.arrival) / 1000), current: press.session)
        }
        note(h.runTimers(for: 10), current: nil)
        #expect(answers.count == presses.count && answers.values.allSatisfy { $0.count == 1 }, "\(answers)")
        // By arrival, then by read.
        let readOrder = Dictionary(uniqueKeysWithValues: presses.enumerated().map { ($1.session, $0) })
        let expected = presses.sorted { ($0.arrival, readOrder[$0.session]!) < ($1.arrival, readOrder[$1.session]!) }
        let ranking = h.core.snapshot(at: h.now).groups[1].ranking
        #expect(ranking.map(\.session.number) == expected.map(\.session))
        #expect(ranking.map(\.rank) == Array(1...presses.count))
        #expect(h.core.lateArrivals == 0)
    }
}
