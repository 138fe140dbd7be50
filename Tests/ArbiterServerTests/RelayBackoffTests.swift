@testable import ArbiterClusterServer
@testable import ArbiterServer
import Testing

/// The relay's pure pieces: when to dial again, and what an address is.
@Suite("relay backoff and addresses")
struct RelayBackoffTests {
    @Test func theWaitDoublesFromFiftyMillisecondsToOneSecondAndStartsOverOnSuccess() {
        var backoff = RelayBackoff(first: 50, max: 1_000)
        #expect(backoff.wait(at: 0) == 0)
        var waits: [Int64] = []
        var now: Int64 = 10_000
        for _ in 0..<7 {
            backoff.failed(at: now)
            waits.append(backoff.wait(at: now))
            now += 5_000
        }
        #expect(waits == [50, 100, 200, 400, 800, 1_000, 1_000])
        // The wait runs down with the clock.
        backoff.failed(at: 100)
        #expect(backoff.wait(at: 600) == 500)
        #expect(backoff.wait(at: 1_100) == 0)
        backoff.succeeded()
        #expect(backoff.wait(at: 0) == 0)
        backoff.failed(at: 0)
        #expect(backoff.wait(at: 0) == 50)
    }

    @Test func addressesAreHostAndPortWithIPv6InBrackets() {
        let parsed = ["10.0.0.11:7070", "[::1]:7070", "localhost:1"].map { RelayAddress($0).map { "\($0.host) \($0.port)" } }
        #expect(parsed == ["10.0.0.11 7070", "[::1] 7070", "localhost 1"])
        for bad in ["10.0.0.11", "10.0.0.11:", ":7070", "::1:7070", "10.0.0.11:0", "10.0.0.11:70700", "h:p"] {
            #expect(RelayAddress(bad) == nil, "\(bad)")
        }
    }
}
