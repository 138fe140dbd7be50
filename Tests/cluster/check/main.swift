import ArbiterCluster
import ArbiterCore
import ArbiterEtcd
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
    Instant(milliseconds: Int64(DispatchTime.now().uptimeNanoseconds / 1_000_000))
}

func sleep(milliseconds: Int) {
    usleep(UInt32(milliseconds) * 1000)
}

/// Steps `nodes` every 100 ms until `done` holds, for at most `seconds`; the time it took.
@discardableResult
func stepUntil(_ nodes: [ClusterNode], seconds: Double, _ what: String, _ done: () -> Bool) -> Int64 {
    let start = now()
    while now().since(start) < Int64(seconds * 1000) {
        for node in nodes { node.step() }
        if done() { return now().since(start) }
        sleep(milliseconds: 100)
    }
    fail("\(what) within \(seconds) s (last etcd error: \(nodes.map { $0.lastError.map(String.init(describing:)) ?? "none" }))")
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
    guard let stale = FenceReservation(current: current, term: block1.term - 1, leaderKey: keys.leader("demo"), fenceKey: keys.fence("demo"), size: 1000) else { fail("fence key unreadable") }
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
guard let block2 = n1.canDecide("demo"), block2.first > 2000 else { fail("after the restart fences restarted low: \(String(describing: n1.canDecide("demo")))") }
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
print("arbiter-etcd-check: all passed")
