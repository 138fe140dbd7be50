import ArbiterCluster
import ArbiterCore
import Dispatch
import Foundation
import Synchronization
import Testing

@testable import ArbiterClusterRuntime

/// The lease's id and deadline as the hot paths read them without the keeper's lock: what
/// a reader gets must be a pair the keeper published, never one half of a publication
/// and one of another (that would pair a new lease with an old deadline).
@Suite struct PublishedLeaseTests {
    let timing = ClusterTiming(ttlSeconds: 3, keepAliveIntervalMilliseconds: 500, safetyMarginMilliseconds: 500)

    /// A machine holding lease `id`, granted at `id` seconds: its deadline follows from the id.
    func held(_ id: Int64) -> NodeLeaseStateMachine {
        var machine = NodeLeaseStateMachine(timing: timing)
        machine.grantSent(now: Instant(milliseconds: id * 1_000))
        _ = machine.granted(EtcdLease(id: id, ttlSeconds: 3))
        return machine
    }

    @Test func readsWhatWasPublished() throws {
        let cell = PublishedLease()
        let none = try #require(cell.read())
        #expect(none.id == nil, "nothing published: no lease")
        cell.publish(held(7))
        let seven = try #require(cell.read())
        #expect(seven.id == 7)
        #expect(seven.safeUntil == held(7).safeUntil)
        cell.publish(NodeLeaseStateMachine(timing: timing))
        #expect(try #require(cell.read()).id == nil, "the lease given up: none again")
    }

    @Test func aReaderNeverPairsOneLeaseWithAnothersDeadline() {
        let cell = PublishedLease()
        let machines = (1...64).map { held(Int64($0)) }
        let deadlines = Dictionary(uniqueKeysWithValues: machines.map { ($0.leaseID!, $0.safeUntil!) })
        let done = Atomic<Bool>(false)
        let torn = Atomic<Int>(0)
        let reads = Atomic<Int>(0)
        let finished = DispatchSemaphore(value: 0)
        // Threads of their own: on Dispatch's shared pool, with the whole suite running on
        // two cores, the readers could start only after the writer had given up, and the
        // test read nothing (seen once in `swift test`).
        for _ in 0..<2 {
            Thread {
                // Bounded: stops when the writer is done, or after this many reads.
                for _ in 0..<50_000_000 where !done.load(ordering: .acquiring) {
                    guard let seen = cell.read(), let id = seen.id else { continue }
                    reads.add(1, ordering: .relaxed)
                    if deadlines[id] != seen.safeUntil { torn.add(1, ordering: .relaxed) }
                }
                finished.signal()
            }.start()
        }
        // Until the readers have read a good many pairs while publications go on (they may
        // start late), within a bound.
        for round in 0..<20_000_000 where reads.load(ordering: .relaxed) < 200_000 {
            cell.publish(machines[round % machines.count])
        }
        done.store(true, ordering: .releasing)
        finished.wait()
        finished.wait()
        #expect(torn.load(ordering: .relaxed) == 0)
        #expect(reads.load(ordering: .relaxed) > 0)
    }
}
