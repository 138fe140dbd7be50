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

    /// Each part has its own 0: no address is locked out, while the server-wide ceiling
    /// still counts until it is turned off too.
    @Test func zeroAllowanceTurnsItOff() {
        var budget = KeyFailureBudget(policy: .init(allowance: 0))
        for t in 0..<100 { #expect(budget.recordFailure("a", now: Int64(t)) == nil) }
        #expect(budget.check("a", now: 100) == .ceilingReached(remainingMs: 19))
        var off = KeyFailureBudget(policy: .init(allowance: 0, ceilingPerSecond: 0))
        for t in 0..<100 { #expect(off.recordFailure("a", now: Int64(t)) == nil) }
        #expect(off.check("a", now: 100) == .allowed)
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

    /// One host commonly has a whole IPv6 /64: each of its addresses had a budget of its
    /// own, so one machine could guess without end. A /64 shares one budget.
    @Test func ipv6AddressesOfOneSlash64ShareABudget() {
        let clock = ManualClock()
        func now() -> Int64 { clock.now().milliseconds }
        var budget = KeyFailureBudget(policy: policy)
        for i in 1...3 {
            #expect(budget.check("2001:db8:1:2::\(i)", now: now()) == .allowed)
            #expect(budget.recordFailure("2001:db8:1:2:\(i):\(i):\(i):\(i)", now: now()) == nil)
            clock.advance(milliseconds: 1)
        }
        #expect(budget.recordFailure("2001:0db8:0001:0002:ffff::9", now: now()) == 1000)
        #expect(budget.check("2001:db8:1:2:abcd::77", now: now()) == .lockedOut(remainingMs: 1000))
        #expect(budget.check("2001:DB8:1:2::1%eth0", now: now()) == .lockedOut(remainingMs: 1000))
        // The next /64 is another network.
        #expect(budget.check("2001:db8:1:3::1", now: now()) == .allowed)
        clock.advance(milliseconds: 1000)
        #expect(budget.check("2001:db8:1:2::1", now: now()) == .allowed)
        #expect(KeyFailureBudget.client(ofAddress: "2001:db8:1:2:3:4:5:6") == "2001:db8:1:2::/64")
        // IPv4 as it is, also mapped into IPv6; what is not an address stays as it is.
        #expect(KeyFailureBudget.client(ofAddress: "10.0.0.7") == "10.0.0.7")
        #expect(KeyFailureBudget.client(ofAddress: "::ffff:10.0.0.7") == "10.0.0.7")
        #expect(KeyFailureBudget.client(ofAddress: "not:an:address") == "not:an:address")
    }

    /// Many addresses (198 on 127.0.0.0/8 guessed 990 keys in 0.6 s) each have a budget
    /// of their own: the whole server takes at most `ceilingPerSecond` wrong keys a second,
    /// and past it no key is even checked, whoever presents it.
    @Test func aServerWideCeilingOnWrongKeys() {
        let clock = ManualClock()
        func now() -> Int64 { clock.now().milliseconds }
        var budget = KeyFailureBudget(policy: .init(allowance: 5, maxAddresses: 1000, ceilingPerSecond: 10))
        // A second's worth at once, from ten addresses, none of them over its own budget.
        for i in 0..<10 {
            #expect(budget.check("10.0.2.\(i)", now: now()) == .allowed)
            budget.recordFailure("10.0.2.\(i)", now: now())
        }
        #expect(budget.check("10.0.2.99", now: now()) == .ceilingReached(remainingMs: 100))
        #expect(budget.check("2001:db8::1", now: now()) == .ceilingReached(remainingMs: 100))
        clock.advance(milliseconds: 99)
        #expect(budget.check("10.0.2.99", now: now()) == .ceilingReached(remainingMs: 1))
        // It refills at its rate: one wrong key per 100 ms, never more than a second's worth.
        clock.advance(milliseconds: 1)
        #expect(budget.check("10.0.2.99", now: now()) == .allowed)
        budget.recordFailure("10.0.2.99", now: now())
        #expect(budget.check("10.0.2.98", now: now()) == .ceilingReached(remainingMs: 100))
        clock.advance(milliseconds: 60_000)
        for i in 0..<10 {
            #expect(budget.check("10.0.3.\(i)", now: now()) == .allowed)
            budget.recordFailure("10.0.3.\(i)", now: now())
        }
        #expect(budget.check("10.0.3.99", now: now()) == .ceilingReached(remainingMs: 100))
        // An address's own lockout is what it is told first.
        for _ in 0..<10 { budget.recordFailure("10.0.4.1", now: now()) }
        #expect(budget.check("10.0.4.1", now: now()) == .lockedOut(remainingMs: 16_000))
        // Logged once, then at most once a minute.
        let warnings = [0, 59_999, 60_000].map { budget.takeCeilingWarning(now: now() + $0) }
        #expect(warnings == [true, false, true])
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

    /// Guesses from several loopback addresses, each well inside its own budget, meet the
    /// server-wide ceiling: past it no key is checked, the right one included, from any
    /// address, until it refills.
    @Test func guessesFromManyAddressesMeetTheServerWideCeiling() throws {
        let clock = ManualClock()
        let server = try TestServer(panels: [Self.keyed], clock: clock) {
            $0.keyFailures = KeyFailureBudget.Policy(allowance: 5, ceilingPerSecond: 3)
        }
        func hello(_ key: String, from source: String) throws -> String {
            let c = try LineClient(port: server.port, source: source)
            c.send("HELLO x key=\(key)")
            _ = try c.expect("WELCOME")
            return try c.readLine()
        }
        for i in 2...4 { #expect(try hello("guess-\(i)", from: "127.0.0.\(i)").hasPrefix("ERROR forbidden")) }
        let refused = try hello("guess-5", from: "127.0.0.5")
        #expect(refused == "ERROR rate-limited too many wrong keys from many addresses at once; no key is checked for 1 s; nothing was changed")
        #expect(try hello("right-key", from: "127.0.0.6").hasPrefix("ERROR rate-limited too many wrong keys from many addresses at once"))
        let bearer = try RawSocket(port: server.port)
        bearer.send("GET /api/panels HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer right-key\r\n\r\n")
        let response = try bearer.readResponse()
        #expect(response.head.hasPrefix("HTTP/1.1 429") && response.head.contains("Retry-After: 1"))
        clock.advance(milliseconds: 334)
        #expect(try hello("right-key", from: "127.0.0.6").hasPrefix("OK HELLO"))
        let scrape = try RawSocket(port: server.port)
        scrape.send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let metrics = try scrape.readResponse().body
        #expect(metrics.contains("arbiter_key_failures_total 3"))
        #expect(metrics.contains("arbiter_key_ceiling_refusals_total 3"))
        #expect(metrics.contains("arbiter_key_lockouts_total 0"))
        #expect(server.log.lines.contains { $0.contains("msg=\"wrong keys: server-wide ceiling reached") })
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
