import ArbiterCore
import ArbiterIO
import ArbiterServer
import ArbiterTestSupport
import Foundation
import Testing

@Suite("key guessing: a budget of wrong keys per address")
struct KeyFailureBudgetTests {
    let policy = KeyFailureBudget.Policy(allowance: 3, baseLockoutMs: 1000, maxLockoutMs: 8000, forgetAfterMs: 60_000, maxAddresses: 3)

    @Test func freeFailuresThenDoublingLockouts() {
        var budget = KeyFailureBudget(policy: policy)
        for t in 0..<3 {
            #expect(budget.check("10.0.0.1", now: Int64(t)) == .allowed)
            #expect(budget.recordFailure("10.0.0.1", now: Int64(t)) == nil)
        }
        #expect(budget.recordFailure("10.0.0.1", now: 10) == 1000)
        #expect(budget.check("10.0.0.1", now: 10) == .lockedOut(remainingMs: 1000))
        #expect(budget.check("10.0.0.1", now: 1009) == .lockedOut(remainingMs: 1))
        #expect(budget.check("10.0.0.1", now: 1010) == .allowed)
        // Other addresses are not affected.
        #expect(budget.check("10.0.0.2", now: 20) == .allowed)
        #expect(budget.recordFailure("10.0.0.1", now: 2000) == 2000)
        #expect(budget.recordFailure("10.0.0.1", now: 5000) == 4000)
        #expect(budget.recordFailure("10.0.0.1", now: 10_000) == 8000)
        #expect(budget.recordFailure("10.0.0.1", now: 20_000) == 8000, "capped")
        // Quiet for longer than forgetAfterMs: starts over with its free failures.
        #expect(budget.recordFailure("10.0.0.1", now: 90_000) == nil)
        #expect(budget.check("10.0.0.1", now: 90_000) == .allowed)
    }

    @Test func zeroAllowanceTurnsItOff() {
        var budget = KeyFailureBudget(policy: .init(allowance: 0))
        for t in 0..<100 { #expect(budget.recordFailure("a", now: Int64(t)) == nil) }
        #expect(budget.check("a", now: 100) == .allowed)
    }

    @Test func memoryIsBounded() {
        var budget = KeyFailureBudget(policy: policy)
        for i in 0..<50 { budget.recordFailure("10.0.1.\(i)", now: Int64(i)) }
        #expect(budget.count <= 3)
    }

    @Test func addressesOfPeers() {
        #expect(KeyFailureBudget.address(ofPeer: "10.0.0.7:51234") == "10.0.0.7")
        #expect(KeyFailureBudget.address(ofPeer: "[fe80::1]:51234") == "fe80::1")
        #expect(KeyFailureBudget.address(ofPeer: "[::1]:7") == "::1")
    }
}

@Suite("key guessing over loopback")
struct KeyGuessingServerTests {
    static let keyed = PanelConfig(
        id: "k", title: "Keyed", buttons: PanelConfig.demo.buttons,
        keys: PanelKeys(view: nil, press: "right-key", admin: nil))

    @Test func parallelGuessesFromOneAddressAreLockedOut() throws {
        let server = try TestServer(panels: [Self.keyed]) {
            $0.keyFailures = KeyFailureBudget.Policy(allowance: 3, baseLockoutMs: 60_000)
            $0.reactorCount = 2  // guesses are checked on two threads at once
        }
        // Twenty connections guess at once, each with its own wrong key.
        let guessers = try (0..<20).map { _ in try LineClient(port: server.port) }
        for (i, g) in guessers.enumerated() { g.send("HELLO g\(i) key=guess-\(i)") }
        var replies: [String] = []
        for g in guessers {
            _ = try g.expect("WELCOME")
            replies.append(try g.readLine())
        }
        #expect(replies.filter { $0.hasPrefix("ERROR forbidden") }.count == 4, "\(replies)")
        #expect(replies.filter { $0.hasPrefix("ERROR rate-limited too many wrong keys") }.count == 16)
        // Locked out: even the right key is not checked, on a new connection too.
        let late = try LineClient(port: server.port)
        late.send("HELLO late key=right-key")
        _ = try late.expect("WELCOME")
        #expect(try late.readLine().hasPrefix("ERROR rate-limited too many wrong keys"))
        // A HELLO without a key is not a guess and still works.
        late.send("HELLO late")
        #expect(try late.readLine().hasPrefix("OK HELLO name=late"))
        let bearer = try RawSocket(port: server.port)
        bearer.send("GET /api/panels HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer right-key\r\n\r\n")
        let refused = try bearer.readResponse()
        #expect(refused.head.hasPrefix("HTTP/1.1 429"))
        #expect(refused.head.contains("Retry-After: "))
        let scrape = try RawSocket(port: server.port)
        scrape.send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let metrics = try scrape.readResponse().body
        #expect(metrics.contains("arbiter_key_failures_total 4"))
        #expect(metrics.contains("arbiter_key_lockouts_total 18"))
    }

    @Test func wrongBearerKeysCountAndTheLockoutEnds() throws {
        let clock = ManualClock()
        let server = try TestServer(panels: [Self.keyed], clock: clock) {
            $0.keyFailures = KeyFailureBudget.Policy(allowance: 1, baseLockoutMs: 300)
        }
        func status(_ key: String) throws -> String {
            let s = try RawSocket(port: server.port)
            s.send("GET /api/panels HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(key)\r\n\r\n")
            return String(try s.readResponse().head.prefix(12))
        }
        #expect(try status("wrong-1") == "HTTP/1.1 200")
        #expect(try status("wrong-2") == "HTTP/1.1 200")  // the second wrong key starts the lockout
        #expect(try status("right-key") == "HTTP/1.1 429")
        clock.advance(milliseconds: 400)
        #expect(try status("right-key") == "HTTP/1.1 200")
        let c = try LineClient(port: server.port)
        c.send("HELLO x key=right-key")
        _ = try c.expect("WELCOME")
        #expect(try c.readLine().hasPrefix("OK HELLO name=x"))
    }
}
