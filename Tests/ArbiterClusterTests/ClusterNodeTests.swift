import ArbiterCore
import ArbiterIO
import Testing
@testable import ArbiterCluster

/// Several `ClusterNode`s against one `InMemoryEtcd` and one manual clock. Every round
/// steps the live nodes and checks, at that instant, that no panel has two deciders.
@Suite struct ClusterNodeTests {
    let clock = ManualClock.forCluster()
    let etcd: InMemoryEtcd

    init() {
        etcd = InMemoryEtcd(clock: clock.read)
    }

    func node(_ name: String, panels: [String]) -> ClusterNode {
        ClusterNode(name: name, advertise: "127.0.0.1:\(7000 + name.count)", panels: panels, etcd: etcd, clock: clock.read)
    }

    /// Steps `nodes` every 100 ms for `rounds` rounds (bounded), checking the invariant.
    func run(_ nodes: [ClusterNode], rounds: Int, until done: () -> Bool = { false }) {
        for _ in 0..<rounds {
            for n in nodes { n.step() }
            checkAtMostOneDecider(nodes)
            if done() { return }
            clock.advance(100)
        }
    }

    func checkAtMostOneDecider(_ nodes: [ClusterNode]) {
        let panels = Set(nodes.flatMap { $0.machines.keys })
        for panel in panels {
            let deciders = nodes.filter { $0.canDecide(panel) != nil }.map(\.name)
            #expect(deciders.count <= 1, "\(panel) decided by \(deciders) at \(clock.now)")
        }
    }

    @Test func oneNodeWinsEachPanelAndTheOtherFollowsIt() throws {
        let a = node("a", panels: ["demo"])
        let b = node("b", panels: ["demo"])
        run([a, b], rounds: 5)
        let deciders = [a, b].filter { $0.canDecide("demo") != nil }
        #expect(deciders.count == 1)
        let key = try #require(try etcd.get("/arbiter/panels/demo/leader"))
        let winner = try #require(deciders.first)
        #expect(key.valueText == winner.name)
        let loser = winner === a ? b : a
        #expect(loser.machines["demo"]?.state == .following(leader: LeaderInfo(electionKey: key)))
        #expect(try etcd.get("/arbiter/panels/demo/fence")?.valueText == "1000")
        #expect(winner.canDecide("demo") == FenceBlock(term: key.createRevision, first: 1, last: 1000))
    }

    @Test func aDeadNodesLeaseExpiresAndTheOtherTakesOverAboveItsFences() throws {
        let a = node("a", panels: ["demo"])
        run([a], rounds: 3)
        let first = try #require(a.canDecide("demo"))
        let b = node("b", panels: ["demo"])
        run([a, b], rounds: 3)
        #expect(b.canDecide("demo") == nil)
        // a dies: only b steps from here on.
        let died = clock.now
        run([b], rounds: 100) { b.canDecide("demo") != nil }
        let second = try #require(b.canDecide("demo"))
        #expect(second.term > first.term)
        #expect(second.first > first.last)
        #expect(clock.now.since(died) <= 3_000 + 1_000, "took over \(clock.now.since(died)) ms after the death")
    }

    @Test func fenceBlocksStrictlyIncreaseAcrossManyLeaderChanges() throws {
        let nodes = ["a", "b", "c"].map { node($0, panels: ["demo"]) }
        var blocks: [FenceBlock] = []
        for n in nodes { n.onAction = { _, action in if case .startDeciding(let block) = action { blocks.append(block) } } }
        run(nodes, rounds: 5)
        for round in 0..<9 {
            let leader = try #require(nodes.first { $0.canDecide("demo") != nil }, "round \(round)")
            if round % 2 == 0 {
                leader.reserveMoreFences("demo")
                leader.shutdown()
            } else {
                // Lease expiry instead: the leader stops stepping for a while.
                let others = nodes.filter { $0 !== leader }
                run(others, rounds: 60) { others.contains { $0.canDecide("demo") != nil } }
            }
            run(nodes, rounds: 60) { nodes.contains { $0.canDecide("demo") != nil } }
        }
        #expect(blocks.count >= 10)
        for (earlier, later) in zip(blocks, blocks.dropFirst()) {
            #expect(later.term > earlier.term)
            #expect(later.first > earlier.last)
        }
    }

    /// A shutdown while etcd does not answer: every panel stops deciding at once, and
    /// after the first failed call no other is made (with the HTTP client each waits out
    /// its 2 s timeout: one per panel led, then the lease's revoke).
    @Test func aShutdownWithoutEtcdStopsDecidingAndGivesUpAfterOneFailedCall() throws {
        let counting = CountingEtcd(etcd)
        let panels = ["p1", "p2", "p3", "p4"]
        let a = ClusterNode(name: "a", advertise: "127.0.0.1:7001", panels: panels, etcd: counting, clock: clock.read)
        run([a], rounds: 5)
        #expect(panels.allSatisfy { a.canDecide($0) != nil })
        counting.failing = true
        let before = counting.calls
        a.shutdown()
        #expect(counting.calls - before == 1)
        #expect(panels.allSatisfy { a.canDecide($0) == nil })
        // With etcd answering, every key is given up and the lease revoked.
        let b = ClusterNode(name: "b", advertise: "127.0.0.1:7002", panels: panels, etcd: CountingEtcd(etcd), clock: clock.read)
        counting.failing = false
        run([b], rounds: 100) { panels.allSatisfy { b.canDecide($0) != nil } }
        #expect(panels.allSatisfy { b.canDecide($0) != nil })
        b.shutdown()
        #expect(try panels.allSatisfy { try etcd.get("/arbiter/panels/\($0)/leader") == nil })
    }

    @Test func aDeposedLeadersReservationIsRefusedByTheTermGuard() throws {
        let a = node("a", panels: ["demo"])
        run([a], rounds: 3)
        let block = try #require(a.canDecide("demo"))
        // Someone else holds the key now (a's key deleted and re-created).
        _ = try etcd.txn(EtcdTxn(compare: [], success: [.delete("/arbiter/panels/demo/leader")]))
        try etcd.put("/arbiter/panels/demo/leader", "b")
        a.reserveMoreFences("demo")
        #expect(a.canDecide("demo") == nil)
        #expect(a.machines["demo"]?.state == .following(leader: nil))
        #expect(try etcd.get("/arbiter/panels/demo/fence")?.valueText == String(block.last))
        let stale = try #require(
            FenceReservation(
                current: try etcd.get("/arbiter/panels/demo/fence"), term: block.term, leaderKey: "/arbiter/panels/demo/leader",
                fenceKey: "/arbiter/panels/demo/fence", size: 1000))
        #expect(try !etcd.txn(stale.txn).succeeded)
    }

    @Test func aPausedLeaderStepsDownOnWakingBeforeAnythingElse() throws {
        let a = node("a", panels: ["demo"])
        let b = node("b", panels: ["demo"])
        run([a], rounds: 3)
        run([a, b], rounds: 2)
        let term = try #require(a.canDecide("demo")).term
        // a is frozen (SIGSTOP) for 6 s; b goes on.
        run([b], rounds: 60)
        #expect(b.canDecide("demo") != nil)
        var first: PanelLeadershipAction?
        a.onAction = { _, action in if first == nil { first = action } }
        a.step()
        #expect(first == .stopDeciding(term: term, reason: .leaseDeadline))
        #expect(a.canDecide("demo") == nil)
        checkAtMostOneDecider([a, b])
    }

    @Test func aLeaderCutOffFromEtcdStopsBeforeItsLeaseCouldExpire() throws {
        let a = node("a", panels: ["demo"])
        run([a], rounds: 3)
        let lease = try #require(a.lease.leaseID)
        etcd.isAvailable = false
        var stoppedAt: Instant?
        a.onAction = { _, action in if case .stopDeciding(_, .leaseDeadline) = action { stoppedAt = clock.now } }
        for _ in 0..<400 {
            clock.advance(10)
            a.step()
            if a.canDecide("demo") != nil {
                etcd.isAvailable = true
                #expect(etcd.leaseIsAlive(lease), "deciding at \(clock.now) on an expired lease")
                etcd.isAvailable = false
            }
        }
        _ = try #require(stoppedAt, "the leader never stepped down on its deadline")
        etcd.isAvailable = true
        #expect(!etcd.leaseIsAlive(lease))
        guard case .unavailable = a.lastError else { Issue.record("lastError \(String(describing: a.lastError))"); return }
    }

    /// etcd away past the leader's safety margin but not past its lease (real etcd even
    /// extends leases across its own elections): the key outlives the step-down. The
    /// leader then decides again only under a new term, so no member sees a second reign
    /// (a seq chain starting over) under one `term=`.
    @Test func aLeaderThatStoppedWhileEtcdWasAwayDecidesAgainOnlyUnderANewTerm() throws {
        let a = node("a", panels: ["demo"])
        run([a], rounds: 3)
        let first = try #require(a.canDecide("demo"))
        let lease = try #require(a.lease.leaseID)
        var actions: [PanelLeadershipAction] = []
        a.onAction = { _, action in actions.append(action) }
        etcd.isAvailable = false
        for _ in 0..<400 where !actions.contains(.stopDeciding(term: first.term, reason: .leaseDeadline)) {
            clock.advance(10)
            a.step()
        }
        #expect(actions.contains(.stopDeciding(term: first.term, reason: .leaseDeadline)))
        etcd.isAvailable = true
        // A new etcd leader extends every lease (its lessor's promotion), which is how the
        // key outlived the step-down in the nemesis run; here the extension is done by hand.
        _ = try etcd.keepAlive(lease: lease)
        run([a], rounds: 50) { a.canDecide("demo") != nil }
        let again = try #require(a.canDecide("demo"), "a leads again by itself")
        #expect(again.term > first.term)
        #expect(again.first > first.last)
        let restarts = actions.filter { if case .startDeciding(let block) = $0 { block.term == first.term } else { false } }
        #expect(restarts.isEmpty, "decided again under term \(first.term): \(actions)")
    }

    @Test func nodesRecoverByThemselvesWhenEtcdAnswersAgain() throws {
        let a = node("a", panels: ["demo"])
        run([a], rounds: 3)
        etcd.isAvailable = false
        run([a], rounds: 50)
        #expect(a.canDecide("demo") == nil)
        etcd.isAvailable = true
        run([a], rounds: 50) { a.canDecide("demo") != nil }
        #expect(a.canDecide("demo") != nil)
    }

    @Test func threeNodesSpreadThirtyPanelsAtMostTwelveEach() throws {
        let panels = (1...30).map { "p\($0)" }
        let a = node("a", panels: panels)
        run([a], rounds: 5)
        #expect(a.leading.count == 30, "alone, a node leads everything")
        let nodes = [a, node("b", panels: panels), node("c", panels: panels)]
        run(nodes, rounds: 200) {
            nodes.allSatisfy { $0.leading.count <= 11 } && nodes.map(\.leading.count).reduce(0, +) == 30
        }
        let counts = nodes.map(\.leading.count)
        #expect(counts.reduce(0, +) == 30, "\(counts)")
        #expect(counts.allSatisfy { $0 <= 12 }, "\(counts)")
        // Settled: another 5 s changes nothing.
        let before = nodes.map(\.leading)
        run(nodes, rounds: 50)
        #expect(nodes.map(\.leading) == before)
    }

    @Test func whenANodeDiesTheOthersTakeAllItsPanels() throws {
        let panels = (1...30).map { "p\($0)" }
        let nodes = ["a", "b", "c"].map { node($0, panels: panels) }
        run(nodes, rounds: 100) { nodes.map(\.leading.count).reduce(0, +) == 30 }
        let survivors = Array(nodes.dropFirst())
        run(survivors, rounds: 200) { survivors.map(\.leading.count).reduce(0, +) == 30 }
        #expect(survivors.map(\.leading.count).reduce(0, +) == 30)
    }
}

/// Counts the calls that reach etcd, and makes them fail while `failing`.
final class CountingEtcd: EtcdAPI {
    let inner: InMemoryEtcd
    var calls = 0
    var failing = false

    init(_ inner: InMemoryEtcd) {
        self.inner = inner
    }

    private func enter() throws(EtcdError) {
        calls += 1
        if failing { throw .unavailable("failing on purpose") }
    }

    func grantLease(ttlSeconds: Int64) throws(EtcdError) -> EtcdLease {
        try enter()
        return try inner.grantLease(ttlSeconds: ttlSeconds)
    }

    func keepAlive(lease: Int64) throws(EtcdError) -> EtcdLease {
        try enter()
        return try inner.keepAlive(lease: lease)
    }

    func revokeLease(_ id: Int64) throws(EtcdError) {
        try enter()
        try inner.revokeLease(id)
    }

    func range(_ keys: EtcdKeyRange) throws(EtcdError) -> EtcdRangeResponse {
        try enter()
        return try inner.range(keys)
    }

    func txn(_ txn: EtcdTxn) throws(EtcdError) -> EtcdTxnResponse {
        try enter()
        return try inner.txn(txn)
    }

    func watch(_ keys: EtcdKeyRange, startRevision: Int64) throws(EtcdError) -> any EtcdWatchStream {
        try enter()
        return try inner.watch(keys, startRevision: startRevision)
    }
}
