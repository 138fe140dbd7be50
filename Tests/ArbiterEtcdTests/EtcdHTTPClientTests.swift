import ArbiterCluster
import ArbiterIO
import Foundation
import Synchronization
import Testing
@testable import ArbiterEtcd

/// The client against `FakeGateway`s on loopback: endpoint failover, a silent member,
/// streamed answers that never end, and etcd's error bodies.
@Suite struct EtcdHTTPClientTests {
    static let rangeAnswer = FakeGateway.json(
        #"{"header":{"revision":"7"},"kvs":[{"key":"YQ==","create_revision":"5","mod_revision":"6","version":"2","value":"MQ==","lease":"9"}],"count":"1"}"#)

    func endpoints(_ texts: [String]) throws -> [EtcdEndpoint] {
        try EtcdEndpoint.parseList(texts.joined(separator: ",")).get()
    }

    @Test func aRefusedEndpointIsSkippedAndTheNextOneRemembered() throws {
        let good = try FakeGateway { _, _ in Self.rangeAnswer }
        defer { good.stop() }
        let client = EtcdHTTPClient(endpoints: try endpoints(["http://127.0.0.1:\(FakeGateway.refusedPort())", good.endpoint]), timeoutMilliseconds: 5_000)
        let answer = try client.range(.key("a"))
        #expect(
            answer == EtcdRangeResponse(revision: 7, kvs: [EtcdKeyValue(key: [0x61], value: [0x31], createRevision: 5, modRevision: 6, version: 2, lease: 9)]))
        #expect(client.currentEndpoint.port == good.port)
        #expect(good.seen.map(\.path) == ["/v3/kv/range"])
        #expect(good.seen.first?.body == #"{"key":"YQ=="}"#)
    }

    @Test func aMemberThatNeverAnswersIsUnavailableAndTheNextCallGoesElsewhere() throws {
        let silent = try FakeGateway { _, _ in nil }
        let good = try FakeGateway { _, _ in Self.rangeAnswer }
        defer { silent.stop(); good.stop() }
        let client = EtcdHTTPClient(endpoints: try endpoints([silent.endpoint, good.endpoint]), timeoutMilliseconds: 300)
        do {
            _ = try client.range(.key("a"))
            Issue.record("a silent member answered")
        } catch {
            guard case .unavailable(let why) = error else { Issue.record("got \(error)"); return }
            #expect(why.contains("did not answer /v3/kv/range within 300 ms"))
        }
        #expect(good.seen.isEmpty, "a request that may have been applied is not sent again elsewhere")
        #expect(try client.range(.key("a")).revision == 7)
        #expect(good.seen.count == 1)
    }

    @Test func noEndpointAtAllIsUnavailableNamingEachOne() throws {
        let client = EtcdHTTPClient(
            endpoints: try endpoints(["http://127.0.0.1:\(FakeGateway.refusedPort())", "http://127.0.0.1:\(FakeGateway.refusedPort())"]),
            timeoutMilliseconds: 1_000)
        do {
            _ = try client.grantLease(ttlSeconds: 3)
            Issue.record("granted without etcd")
        } catch {
            guard case .unavailable(let why) = error else { Issue.record("got \(error)"); return }
            #expect(why.hasPrefix("no etcd endpoint answered"))
            #expect(why.components(separatedBy: "refused").count == 3)
        }
    }

    @Test func aKeepaliveTakesTheFirstStreamedAnswerOfAStreamThatStaysOpen() throws {
        let gateway = try FakeGateway { path, body in
            guard path == "/v3/lease/keepalive" else { return nil }
            let ttl = body.contains("\"42\"") ? #","TTL":"3""# : ""
            return FakeGateway.stream([#"{"result":{"header":{"revision":"2"},"ID":"42"\#(ttl)}}"#])
        }
        defer { gateway.stop() }
        let client = EtcdHTTPClient(endpoints: try endpoints([gateway.endpoint]), timeoutMilliseconds: 5_000)
        #expect(try client.keepAlive(lease: 42) == EtcdLease(id: 42, ttlSeconds: 3))
        #expect(throws: EtcdError.leaseNotFound) { try client.keepAlive(lease: 43) }
    }

    @Test func etcdsErrorBodiesBecomeTheirCases() throws {
        let gateway = try FakeGateway { path, _ in
            switch path {
            case "/v3/lease/revoke":
                FakeGateway.json(
                    #"{"error":"etcdserver: requested lease not found","message":"etcdserver: requested lease not found","code":5}"#, status: "404 Not Found")
            default: FakeGateway.json(#"{"error":"etcdserver: no leader","message":"etcdserver: no leader","code":14}"#, status: "503 Service Unavailable")
            }
        }
        defer { gateway.stop() }
        let client = EtcdHTTPClient(endpoints: try endpoints([gateway.endpoint]), timeoutMilliseconds: 5_000)
        #expect(throws: EtcdError.leaseNotFound) { try client.revokeLease(1) }
        #expect(throws: EtcdError.unavailable("etcdserver: no leader")) { try client.txn(EtcdTxn(compare: [], success: [])) }
    }

    @Test func aWatchHandsOverEventsAsTheyArriveAndNothingWhenQuiet() throws {
        let gateway = try FakeGateway { path, _ in
            guard path == "/v3/watch" else { return nil }
            return FakeGateway.stream([
                #"{"result":{"header":{"revision":"3"},"created":true}}"#,
                #"{"result":{"header":{"revision":"4"},"events":[{"kv":{"key":"YQ==","create_revision":"4","mod_revision":"4","version":"1","value":"Mg=="}}]}}"#,
            ])
        }
        defer { gateway.stop() }
        let client = EtcdHTTPClient(endpoints: try endpoints([gateway.endpoint]), timeoutMilliseconds: 5_000)
        let watch = try client.watch(.prefix("a"), startRevision: 0)
        let events = try watch.next(timeoutMilliseconds: 1_000)
        #expect(events.map(\.kind) == [.put])
        #expect(events.first?.kv.valueText == "2")
        #expect(try watch.next(timeoutMilliseconds: 50).isEmpty)
        watch.cancel()
        #expect(throws: EtcdError.self) { try watch.next(timeoutMilliseconds: 50) }
        #expect(gateway.seen.first?.body.contains(#""prev_kv":true"#) == true)
    }

    @Test func whileOneCallHangsOnAFrozenMemberTheNodesOtherCallsGoElsewhere() throws {
        // Frozen (SIGSTOP): it accepts connections and never answers.
        let asked = DispatchSemaphore(value: 0)
        let frozen = try FakeGateway { _, _ in
            asked.signal()
            return nil
        }
        let good = try FakeGateway { _, _ in Self.rangeAnswer }
        defer { frozen.stop(); good.stop() }
        let list = try endpoints([frozen.endpoint, good.endpoint])
        // Health on a clock the test moves: the stall is stepped over, not waited out.
        let clock = ManualClock()
        let health = EtcdMemberHealth(members: 2, clock: clock)
        let lease = EtcdHTTPClient(endpoints: list, timeoutMilliseconds: 10_000, health: health)
        let control = EtcdHTTPClient(endpoints: list, timeoutMilliseconds: 10_000, health: health)
        let hung = DispatchGroup()
        hung.enter()
        // A thread of its own: the call hangs for seconds, which on Dispatch's would delay others' work.
        Thread {
            _ = try? lease.range(.key("a"))
            hung.leave()
        }.start()
        // The request reached the frozen member, so its call began: past the stall time,
        // the member is suspect.
        #expect(asked.wait(timeout: .now() + 5) == .success)
        #expect(!health.isSuspect(0))
        clock.advance(milliseconds: EtcdMemberHealth.stallMilliseconds)
        #expect(health.isSuspect(0))
        let began = Date()
        #expect(try control.range(.key("a")).revision == 7)
        #expect(Date().timeIntervalSince(began) < 5, "answered by the good member, not after the frozen one's timeout")
        #expect(good.seen.count == 1)
        #expect(frozen.seen.count == 1, "only the call that was already there")
        frozen.stop()
        #expect(hung.wait(timeout: .now() + 15) == .success)
    }

    @Test func aWatchOnAMemberTheOtherCallsFoundFrozenEndsSoItIsOpenedElsewhere() throws {
        let gateway = try FakeGateway { path, _ in
            guard path == "/v3/watch" else { return nil }
            return FakeGateway.stream([#"{"result":{"header":{"revision":"3"},"created":true}}"#])
        }
        let other = try FakeGateway { _, _ in Self.rangeAnswer }
        defer { gateway.stop(); other.stop() }
        let health = EtcdMemberHealth(members: 2)
        let client = EtcdHTTPClient(endpoints: try endpoints([gateway.endpoint, other.endpoint]), timeoutMilliseconds: 5_000, health: health)
        let watch = try client.watch(.prefix("a"), startRevision: 0)
        #expect(try watch.next(timeoutMilliseconds: 50).isEmpty, "quiet is not frozen")
        health.unreachable(0)
        #expect(throws: EtcdError.self) { try watch.next(timeoutMilliseconds: 50) }
    }
}
