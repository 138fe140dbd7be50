import ArbiterCluster
import ArbiterCore
import ArbiterTestSupport
import Foundation
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// etcd refusing a leader's fence reservations (at its space quota, the NOSPACE alarm
/// raised): presses past the block in hand are refused with etcd's own reason, not "is
/// reserving its next block" for ever, and work again by themselves once etcd takes writes.
/// Found by hand with a real etcd whose quota was full: the log said nothing.
@Suite("cluster mode: etcd refusing fence reservations", .serialized)
struct ClusterFenceTroubleTests {
    static let noSpace = EtcdError.server(code: 8, message: "etcdserver: mvcc: database space exceeded")

    @Test func pressesPastTheBlockSayWhyAndWorkAgainOnceEtcdTakesWrites() throws {
        let nodes = try ClusterTestNodes(["n1"])
        #expect(try #require(nodes.leader()) == "n1")
        let alice = try nodes.client("n1", name: "alice")
        // The panel's core starts in its queue just after the runtime decides: until then
        // a press is refused `unavailable`, nothing done.
        #expect(try answer(alice, "DOWN demo b1", until: { $0.hasPrefix("GRANTED") }) == "GRANTED demo b1 fence=1")
        alice.send("UP demo b1")
        _ = try alice.expect("OK UP")
        nodes.controlViews["n1"]?.refuseWrites(Self.noSpace)
        // The first block holds fences 1-1000; its next one is asked for at 800.
        for _ in 0..<999 {
            alice.send("DOWN demo b1")
            alice.send("UP demo b1")
        }
        alice.send("PING used")
        let answers = try alice.readLines(through: "PONG used", timeout: 30)
        #expect(answers.filter { $0.hasPrefix("GRANTED demo b1") }.count == 999)
        #expect(answers.contains("GRANTED demo b1 fence=1000"))
        // The reservation asked for at 800 may still be under way: "is reserving" until it
        // has failed once.
        #expect(
            try answer(alice, "DOWN demo b1", until: { $0.contains("cannot reserve") })
                == "ERROR unavailable panel demo cannot reserve its next block of fences in etcd (etcd error 8: etcdserver: mvcc: database space exceeded); nothing was done, and presses work again once etcd takes it (this node's log says more)"
        )
        #expect(try Self.metric(nodes, "arbiter_cluster_fence_reservations_failing") == "1")
        nodes.controlViews["n1"]?.refuseWrites(nil)
        let granted = try answer(alice, "DOWN demo b1", until: { $0.hasPrefix("GRANTED") })
        #expect(granted.hasPrefix("GRANTED demo b1 fence="))
        #expect((field("fence", of: granted).flatMap(UInt64.init) ?? 0) > 1000)
        #expect(try Self.metric(nodes, "arbiter_cluster_fence_reservations_failing") == "0")
    }

    /// One gauge's value on n1's `/metrics`.
    static func metric(_ nodes: ClusterTestNodes, _ name: String) throws -> String? {
        let socket = try RawSocket(port: try #require(nodes.ports["n1"]))
        socket.send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let page = try socket.readResponse().body
        return page.split(separator: "\n").first { $0.hasPrefix(name + " ") }.map { String($0.dropFirst(name.count + 1)) }
    }

    @Test func theLogSaysItWhenItBeginsEveryThirtySecondsAndWhenItEnds() {
        var known: FenceTrouble?
        #expect(FenceTrouble.note(nil, now: 0, in: &known) == .nothing)
        #expect(FenceTrouble.note("full", now: 1_000, in: &known) == .trouble("full", .error))
        #expect(FenceTrouble.note("full", now: 20_000, in: &known) == .nothing)
        #expect(FenceTrouble.note("full", now: 31_000, in: &known) == .trouble("full", .error))
        #expect(FenceTrouble.note("other", now: 32_000, in: &known) == .trouble("other", .error))
        #expect(FenceTrouble.note(nil, now: 40_000, in: &known) == .recovered(afterMs: 39_000))
        #expect(known == nil)
        #expect(FenceTrouble.hint("etcd error 8: etcdserver: mvcc: database space exceeded").contains("etcdctl alarm disarm"))
    }

    /// etcd not answering is most often over in seconds (nemesis runs saw every one recover
    /// within 1.6-5 s): a warning, and an error only once it has lasted 30 s. A refusal is an
    /// error at once, as above.
    @Test func etcdNotAnsweringIsAWarningUntilItHasLastedThirtySeconds() {
        var known: FenceTrouble?
        #expect(FenceTrouble.note("etcd unavailable: timed out", refused: false, now: 1_000, in: &known) == .trouble("etcd unavailable: timed out", .warning))
        #expect(FenceTrouble.note("etcd unavailable: timed out", refused: false, now: 5_000, in: &known) == .nothing)
        #expect(
            FenceTrouble.note("etcd unavailable: refused", refused: false, now: 6_000, in: &known) == .trouble("etcd unavailable: refused", .warning))
        #expect(
            FenceTrouble.note("etcd unavailable: refused", refused: false, now: 36_000, in: &known) == .trouble("etcd unavailable: refused", .error))
        #expect(FenceTrouble.note(nil, now: 37_000, in: &known) == .recovered(afterMs: 36_000))
        // Not answering, then answering with a refusal: an error at once.
        #expect(FenceTrouble.note("etcd unavailable: timed out", refused: false, now: 40_000, in: &known) == .trouble("etcd unavailable: timed out", .warning))
        #expect(FenceTrouble.note("etcd error 8: full", refused: true, now: 41_000, in: &known) == .trouble("etcd error 8: full", .error))
        #expect(!FenceTrouble.isRefusal(.unavailable("no endpoint answered")))
        #expect(FenceTrouble.isRefusal(Self.noSpace))
        #expect(FenceTrouble.isRefusal(.malformed("fence key holds x")))
    }
}
