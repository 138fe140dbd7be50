import ArbiterCluster
import ArbiterClusterRuntime
import ArbiterCore
import ArbiterEtcd
import ArbiterIO
import Foundation

// Runs the real etcd client and the cluster logic against the 3-member etcd that
// Tests/cluster/etcd3.sh started (ETCD_ENDPOINTS, ETCD3_DIR, ETCD3_CTL). Every wait is
// bounded; any failed expectation ends the run with status 1 and says which.

func fail(_ message: String) -> Never {
    print("FAIL: \(message)")
    fflush(nil)
    exit(1)
}

func ok(_ message: String) {
    print("ok: \(message)")
    fflush(nil)
}

func env(_ name: String) -> String {
    guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else {
        fail("\(name) is not set: run me through Tests/cluster/etcd3.sh run")
    }
    return value
}

func now() -> Instant {
    Instant(milliseconds: SystemClock.boot.milliseconds())
}

/// Something a wait of the check's thread may be for has changed: set by the nodes' timers
/// and callbacks, so that the check waits for them, not for a fixed time.
let changed = DispatchSemaphore(value: 0)

/// Waits, at most `seconds`, for `done` to hold, checking it again at each `changed`.
func waitUntil(seconds: Double, _ done: () -> Bool) -> Bool {
    let deadline = DispatchTime.now() + seconds
    // Bounded: each turn waits for a change, none past the deadline.
    while !done() {
        if changed.wait(timeout: deadline) == .timedOut { return done() }
    }
    return true
}

/// Steps `nodes` every 100 ms (a timer, as the server's runtime steps them) until `done`
/// holds, for at most `seconds`; the time it took. `done` runs on the timer's queue, between
/// steps.
@discardableResult
func stepUntil(_ nodes: [ClusterNode], seconds: Double, _ what: String, _ done: @escaping () -> Bool) -> Int64 {
    let start = now()
    let stepper = Stepper(nodes, done)
    let held = stepper.run(seconds: seconds)
    guard held else {
        fail("\(what) within \(seconds) s (last etcd error: \(nodes.map { $0.lastError.map(String.init(describing:)) ?? "none" }))")
    }
    return now().since(start)
}

/// `stepUntil`'s timer: the nodes are touched on its queue only, until `run` returns.
final class Stepper: @unchecked Sendable {
    let nodes: [ClusterNode]
    let done: () -> Bool
    let queue = DispatchQueue(label: "check.step")
    let reached = DispatchSemaphore(value: 0)
    var finished = false

    init(_ nodes: [ClusterNode], _ done: @escaping () -> Bool) {
        self.nodes = nodes
        self.done = done
    }

    func run(seconds: Double) -> Bool {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now(), repeating: .milliseconds(100))
        timer.setEventHandler { [self] in
            guard !finished else { return }
            for node in nodes { node.step() }
            if done() {
                finished = true
                reached.signal()
            }
        }
        timer.resume()
        let held = reached.wait(timeout: .now() + seconds) == .success
        timer.cancel()
        // After the last step has ended: the nodes are the caller's again.
        queue.sync { finished = true }
        return held
    }
}

/// Runs `etcd3.sh VERB DIR N` and waits for it. posix_spawn and waitpid, not Foundation's
/// Process: its waitUntilExit was seen to hang here once the script had started a member.
func member(_ verb: String, _ n: Int) {
    let argv = ["/bin/bash", env("ETCD3_CTL"), verb, env("ETCD3_DIR"), String(n)]
    var cargs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
    defer { for arg in cargs { free(arg) } }
    var pid: pid_t = 0
    let rc = posix_spawn(&pid, "/bin/bash", nil, nil, &cargs, environ)
    guard rc == 0 else { fail("cannot run etcd3.sh \(verb): errno \(rc)") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    guard status == 0 else { fail("etcd3.sh \(verb) \(n) exited with status \(status)") }
}

/// The number (1-3) of etcd's raft leader now (0 if none answered as leader), and the
/// highest raft term the members report.
func leaderMember() -> (member: Int, term: Int) {
    let out = "\(env("ETCD3_DIR"))/leader.out"
    let argv = ["/bin/bash", env("ETCD3_CTL"), "leader", env("ETCD3_DIR"), out]
    var cargs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
    defer { for arg in cargs { free(arg) } }
    var pid: pid_t = 0
    guard posix_spawn(&pid, "/bin/bash", nil, nil, &cargs, environ) == 0 else { fail("cannot run etcd3.sh leader") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let words = ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: " ").map {
        Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }
    return (words.first ?? 0, words.count > 1 ? words[1] : 0)
}

/// Step-down reasons, shared between a node's queue and the check's thread.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [String] = []
    func add(_ what: String = "") { lock.lock(); values.append(what); lock.unlock() }
    var count: Int { lock.lock(); defer { lock.unlock() }; return values.count }
    func since(_ n: Int) -> [String] { lock.lock(); defer { lock.unlock() }; return Array(values.dropFirst(n)) }
}

let endpoints: [EtcdEndpoint]
switch EtcdEndpoint.parseList(env("ETCD_ENDPOINTS")) {
case .success(let list): endpoints = list
case .failure(let error): fail("\(error)")
}
guard endpoints.count == 3 else { fail("expected 3 endpoints, got \(endpoints.count)") }
let timeout: Int64 = 2_000
let keys = ClusterKeys()

// 1. A lease, a campaign, a fence block: through ClusterNode, as the server will.
let client1 = EtcdHTTPClient(endpoints: endpoints, timeoutMilliseconds: timeout)
let n1 = ClusterNode(name: "n1", advertise: "127.0.0.1:17001", panels: ["demo"], etcd: client1, clock: now)
stepUntil([n1], seconds: 10, "n1 leading demo") { n1.canDecide("demo") != nil }
guard let block1 = n1.canDecide("demo"), let lease1 = n1.lease.leaseID else { fail("n1 lost demo at once") }
let electionKey: EtcdKeyValue
do {
    guard let kv = try client1.range(.key(keys.leader("demo"))).kvs.first else { fail("no election key in etcd") }
    electionKey = kv
} catch { fail("range: \(error)") }
guard electionKey.valueText == "n1", electionKey.createRevision == block1.term, electionKey.lease == lease1 else {
    fail("election key \(electionKey) does not match n1's term \(block1.term) and lease \(lease1)")
}
guard block1.first == 1, block1.last == 1000 else { fail("first block \(block1)") }
ok("lease \(lease1) granted; n1 won demo in term \(block1.term) (the key's create_revision); fences \(block1.first)...\(block1.last)")

// 2. Fence blocks are guarded by the term.
n1.reserveMoreFences("demo")
guard let extended = n1.canDecide("demo"), extended.last == 2000 else { fail("second block not reserved: \(String(describing: n1.canDecide("demo")))") }
do {
    let current = try client1.range(.key(keys.fence("demo"))).kvs.first
    guard let stale = FenceReservation(current: current, term: block1.term - 1, leaderKey: keys.leader("demo"), fenceKey: keys.fence("demo"), size: 1000) else {
        fail("fence key unreadable")
    }
    guard try !client1.txn(stale.txn).succeeded else { fail("a reservation under a stale term succeeded") }
    guard try client1.range(.key(keys.fence("demo"))).kvs.first?.valueText == "2000" else { fail("the stale reservation wrote") }
} catch { fail("fence txn: \(error)") }
ok("term-guarded fence blocks: 1001...2000 reserved in term \(block1.term); a stale term's reservation refused")

// 3. Keepalives hold the lease well past its TTL.
let held = now()
stepUntil([n1], seconds: 10, "n1 keeping demo for 4 s") { now().since(held) >= 4_000 && n1.canDecide("demo") != nil }
do {
    let renewed = try client1.keepAlive(lease: lease1)
    guard renewed.ttlSeconds > 0 else { fail("lease gone after keepalives") }
} catch { fail("keepalive: \(error)") }
ok("keepalives (one request each) held lease \(lease1) for 4 s > TTL 3 s")

// 4. A watch sees changes.
do {
    let watch = try client1.watch(.prefix("/arbiter/check/"), startRevision: 0)
    let put = EtcdTxn(compare: [], success: [.put("/arbiter/check/ping", "1")])
    _ = try client1.txn(put)
    var seen: [EtcdWatchEvent] = []
    for _ in 0..<20 where seen.isEmpty { seen = try watch.next(timeoutMilliseconds: 100) }
    guard seen.first?.kind == .put, seen.first?.kv.keyText == "/arbiter/check/ping" else { fail("watch saw \(seen)") }
    watch.cancel()
} catch { fail("watch: \(error)") }
ok("a streamed watch saw the put")

// 5. One member down: the client moves to another endpoint, leadership goes on.
let first = endpoints.firstIndex(of: client1.currentEndpoint) ?? 0
nonisolated(unsafe) var stepDowns: [StepDownReason] = []
n1.onAction = { _, action in if case .stopDeciding(_, let reason) = action { stepDowns.append(reason) } }
member("stop", first + 1)
let killedAt = now()
stepUntil([n1], seconds: 10, "n1 leading demo with one etcd member down") {
    now().since(killedAt) >= 3_000 && client1.currentEndpoint != endpoints[first] && n1.canDecide("demo") != nil
}
n1.onAction = nil
do { _ = try client1.range(.key(keys.leader("demo"))) } catch { fail("range with one member down: \(error)") }
// Reported, not required: killing etcd's own raft leader leaves no leader for about its
// election timeout (1 s), which a 2 s safe window may or may not ride out.
ok("member \(first + 1) killed: calls moved to \(client1.currentEndpoint); n1 leads demo 3 s later (step-downs meanwhile: \(stepDowns))")

// 6. Two members down: calls fail with `unavailable` within the timeout, and the leader stops.
let second = (first + 1) % 3
member("stop", second + 1)
let before = now()
do {
    _ = try client1.range(.key(keys.leader("demo")))
    fail("range answered without a majority")
} catch {
    let took = now().since(before)
    guard case .unavailable = error else { fail("without a majority: \(error), not unavailable") }
    guard took <= timeout + 500 else { fail("unavailable took \(took) ms, timeout \(timeout) ms") }
    ok("members \(first + 1) and \(second + 1) killed: \(error) after \(took) ms")
}
stepUntil([n1], seconds: 15, "n1 stepping down without a majority") { n1.canDecide("demo") == nil }
ok("without a majority n1 stopped deciding (safe deadline)")

// 7. Restart both: everything comes back by itself.
member("start", first + 1)
member("start", second + 1)
stepUntil([n1], seconds: 30, "n1 leading demo again after the restart") { n1.canDecide("demo") != nil }
guard let block2 = n1.canDecide("demo"), block2.first > 2000 else {
    fail("after the restart fences restarted low: \(String(describing: n1.canDecide("demo")))")
}
ok("members restarted: n1 leads demo again, fences from \(block2.first)")

// 8. n1 dies (stops stepping): its lease expires and n2 takes over, above every fence.
let client2 = EtcdHTTPClient(endpoints: Array(endpoints.reversed()), timeoutMilliseconds: timeout)
let n2 = ClusterNode(name: "n2", advertise: "127.0.0.1:17002", panels: ["demo"], etcd: client2, clock: now)
stepUntil([n1, n2], seconds: 10, "n2 following n1") {
    n2.machines["demo"]?.state == .following(leader: LeaderInfo(node: "n1", term: block2.term, lease: n1.lease.leaseID ?? 0))
}
let watch: any EtcdWatchStream
do { watch = try client2.watch(.key(keys.leader("demo")), startRevision: 0) } catch { fail("watch: \(error)") }
let died = now()
let gap = stepUntil([n2], seconds: 10, "n2 taking demo over after n1's lease expired") { n2.canDecide("demo") != nil }
guard let block3 = n2.canDecide("demo") else { fail("n2 lost demo") }
guard block3.term > block2.term, block3.first > block2.last else { fail("n2's block \(block3) not above n1's \(block2)") }
guard gap <= 3_000 + 1_000 + 500 else { fail("handover took \(gap) ms") }
var events: [EtcdWatchEvent] = []
for _ in 0..<20 where events.count < 2 {
    do { events += try watch.next(timeoutMilliseconds: 100) } catch { fail("watch: \(error)") }
}
guard events.count >= 2, events[0].kind == .delete, events[1].kind == .put, events[1].kv.valueText == "n2" else {
    fail("the watch saw \(events.map { "\($0.kind) \($0.kv.valueText)" })")
}
watch.cancel()
ok("n1 silent: n2 took demo over \(gap) ms later in term \(block3.term), fences from \(block3.first) > \(block2.last); the watch saw DELETE then PUT n2")

// 9. n1 wakes as from SIGSTOP: it steps down before anything else.
var firstAction: PanelLeadershipAction?
n1.onAction = { _, action in if firstAction == nil { firstAction = action } }
n1.step()
guard case .stopDeciding(_, .leaseDeadline)? = firstAction else { fail("n1 woke with \(String(describing: firstAction))") }
guard n1.canDecide("demo") == nil else { fail("n1 decides after waking") }
_ = now().since(died)
ok("n1 woke \(now().since(died)) ms later: stopped deciding first, does not decide")

n2.shutdown()

// 10. The config digest: the first node publishes, a node with another config is refused.
do {
    let clusterKey = Array("check key".utf8)
    let panels = [PanelConfig(id: "lobby", buttons: [ButtonConfig(id: "sos", kind: .hold, holdMs: 3000)])]
    var other = panels
    other[0].buttons[0].holdMs = 2000
    let mine = ClusterConfig(panels: panels, clusterKey: clusterKey)
    guard mine.verdict(on: try client1.txn(mine.publishTxn(keys: keys)), node: "n1") == nil else { fail("first config refused") }
    guard mine.verdict(on: try client2.txn(mine.publishTxn(keys: keys)), node: "n2") == nil else { fail("same config refused") }
    let theirs = ClusterConfig(panels: other, clusterKey: clusterKey)
    let refusal = theirs.verdict(on: try client2.txn(theirs.publishTxn(keys: keys)), node: "n3")
    guard refusal == "node n3's config differs from the cluster's: panels[0].buttons[0].hold_ms 2000 vs 3000" else {
        fail("refusal: \(String(describing: refusal))")
    }
    ok("config digest \(mine.digest.prefix(12))... published at \(keys.config); a differing node is refused: \(refusal ?? "")")
} catch { fail("config: \(error)") }

// 11. Seeding the fence key from a single-node journal's reservation.
do {
    let raised = try FenceSeed.seed(["seeded": 123_000], etcd: client1, keys: keys)
    guard raised == ["seeded": 123_000] else { fail("seed raised \(raised)") }
    guard try FenceSeed.seed(["seeded": 5], etcd: client1, keys: keys).isEmpty else { fail("a lower seed lowered the key") }
} catch { fail("seed: \(error)") }
let n4 = ClusterNode(name: "n4", advertise: "127.0.0.1:17004", panels: ["seeded"], etcd: client1, clock: now)
stepUntil([n4], seconds: 10, "n4 leading the seeded panel") { n4.canDecide("seeded") != nil }
guard n4.canDecide("seeded")?.first == 123_001 else { fail("after seeding, fences from \(String(describing: n4.canDecide("seeded")))") }
n4.shutdown()
ok("fence key seeded from a journal's 123000: the first leader hands out fences from 123001; a lower seed changes nothing")

// 12. Kill etcd's own raft leader, several times, with two leaders of one panel each: r1
// through ClusterRuntime (keepalives on their own queue) and s1 through a synchronous
// ClusterNode stepped every 100 ms (keepalives inside the step). Reported, not required.
let rounds = Int(ProcessInfo.processInfo.environment["ARBITER_CHECK_ROUNDS"] ?? "") ?? 5
let runtimeStops = Counter()
let r1 = ClusterRuntime(
    name: "r1", advertise: "127.0.0.1:17005", panels: ["rt"],
    control: EtcdHTTPClient(endpoints: endpoints, timeoutMilliseconds: timeout),
    lease: EtcdHTTPClient(endpoints: endpoints, timeoutMilliseconds: timeout),
    clock: SystemClock.boot,
    callbacks: ClusterRuntimeCallbacks(
        becameLeader: { _, _, _, _ in changed.signal() },
        stopDeciding: { _, _, reason in
            runtimeStops.add("\(reason)")
            changed.signal()
        }))
r1.start()
/// s1 is stepped every 100 ms by a timer on its own queue, as the server's runtime steps
/// its node; the check only reads what the steps publish.
final class SyncDriver: @unchecked Sendable {
    let node: ClusterNode
    let stops = Counter()
    private let lock = NSLock()
    private var leadingNow = false
    private let queue = DispatchQueue(label: "check.sync")
    private var timer: DispatchSourceTimer?

    init(_ node: ClusterNode) {
        self.node = node
        node.onAction = { [stops] _, action in if case .stopDeciding(_, let reason) = action { stops.add("\(reason)") } }
    }

    var leading: Bool { lock.lock(); defer { lock.unlock() }; return leadingNow }

    func start() {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now(), repeating: .milliseconds(100))
        timer.setEventHandler { [self] in
            node.step()
            let leads = node.canDecide("sync") != nil
            lock.lock()
            let turned = leadingNow != leads
            leadingNow = leads
            lock.unlock()
            if turned { changed.signal() }
        }
        self.timer = timer
        timer.resume()
    }

    func stop() {
        timer?.cancel()
        // After the last step has ended.
        queue.sync {}
        node.shutdown()
    }
}
let s1 = SyncDriver(
    ClusterNode(
        name: "s1", advertise: "127.0.0.1:17006", panels: ["sync"], etcd: EtcdHTTPClient(endpoints: endpoints, timeoutMilliseconds: timeout), clock: now))
s1.start()
let syncStops = s1.stops
var runtimeRounds = 0
var syncRounds = 0
var elections: [Int64] = []
for round in 1...rounds {
    _ = waitUntil(seconds: 15) { r1.canDecide("rt") != nil && s1.leading }
    guard r1.canDecide("rt") != nil else { fail("round \(round): r1 does not lead rt") }
    let (leader, termBefore) = leaderMember()
    guard leader != 0 else { fail("round \(round): no etcd leader found") }
    let (r0, s0) = (runtimeStops.count, syncStops.count)
    member("stop", leader)
    let killed = now()
    var elected: Int64?
    // Bounded: 5 s of real time, what the leaders must ride out.
    while now().since(killed) < 5_000 {
        if elected == nil {
            let (now_, term) = leaderMember()
            // A leader in a higher raft term: an election happened after the kill.
            if now_ != 0, term > termBefore { elected = now().since(killed) }
        }
        // Real time on purpose: the round watches the leaders ride out 5 s of etcd's
        // election, and etcd tells of a new raft leader only when asked (etcdctl).
        usleep(100_000)
    }
    let (rStops, sStops) = (runtimeStops.count - r0, syncStops.count - s0)
    let reasons =
        "runtime \(runtimeStops.since(r0)), synchronous \(syncStops.since(s0)); runtime's longest renewal gap so far \(r1.statistics.longestRenewalGapMilliseconds) ms"
    if rStops > 0 { runtimeRounds += 1 }
    if sStops > 0 { syncRounds += 1 }
    if let elected { elections.append(elected) }
    ok(
        "round \(round): killed etcd leader m\(leader); raft term \(termBefore) -> new leader in a later term seen after \(elected.map { "\($0) ms" } ?? "none within 5 s"); step-downs: runtime \(rStops), synchronous \(sStops) (\(reasons))"
    )
    member("start", leader)
    // Real time on purpose: the restarted member rejoins raft and catches up on its own
    // time, of which etcd tells nothing; killing the next leader before that would leave
    // no majority, which is not what a round tests.
    usleep(3_000_000)
}
let stats = r1.statistics
r1.stop(resign: true)
s1.stop()
ok(
    "etcd leader killed \(rounds) times: the runtime's leader stepped down in \(runtimeRounds), the synchronous node's in \(syncRounds); an election (a leader in a later raft term) seen in \(elections.count) of them, after \(elections.sorted()) ms (polled with etcdctl, ~100 ms apart); runtime keepalives \(stats.keepAlivesSent) sent, \(stats.keepAlivesAnswered) answered, \(stats.keepAlivesFailed) failed, longest gap between sends \(stats.longestKeepAliveGapMilliseconds) ms, longest gap between answered sends \(stats.longestRenewalGapMilliseconds) ms, longest control step \(stats.longestStepMilliseconds) ms"
)
print("arbiter-etcd-check: all passed")
