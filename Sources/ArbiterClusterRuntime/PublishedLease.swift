import ArbiterCluster
import ArbiterCore
import Synchronization

/// The lease's id and safe deadline, readable without the keeper's lock (a sequence
/// lock). Every relayed press asks for them four times, on both nodes: through the lock
/// and a copy of the whole state machine that cost about 800 instructions a time, on
/// the relay hop whose latency `bench/cluster.sh` measures.
///
/// The keeper publishes under its own lock after every change of its machine, so there
/// is one writer at a time. A reader that meets a publication under way gets nil and
/// reads the locked state instead; it never waits. Every access is sequentially
/// consistent: equal, even versions around the two loads mean no publication came
/// between them.
final class PublishedLease: Sendable {
    private let version = Atomic<UInt64>(0)
    /// 0: no lease held (etcd's lease ids are never 0).
    private let id = Atomic<Int64>(0)
    private let safeUntil = Atomic<Int64>(0)

    /// Under the keeper's lock.
    func publish(_ machine: NodeLeaseStateMachine) {
        version.add(1, ordering: .sequentiallyConsistent)
        id.store(machine.leaseID ?? 0, ordering: .sequentiallyConsistent)
        safeUntil.store(machine.safeUntil?.nanoseconds ?? 0, ordering: .sequentiallyConsistent)
        version.add(1, ordering: .sequentiallyConsistent)
    }

    /// The lease held and its safe deadline (a nil id: none held), or nil when a
    /// publication was under way.
    func read() -> (id: Int64?, safeUntil: Instant)? {
        let before = version.load(ordering: .sequentiallyConsistent)
        guard before & 1 == 0 else { return nil }
        let lease = id.load(ordering: .sequentiallyConsistent)
        let until = safeUntil.load(ordering: .sequentiallyConsistent)
        guard version.load(ordering: .sequentiallyConsistent) == before else { return nil }
        return (lease == 0 ? nil : lease, Instant(nanoseconds: until))
    }
}
