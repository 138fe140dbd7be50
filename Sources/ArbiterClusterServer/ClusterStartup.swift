import ArbiterCluster
import ArbiterCore
import ArbiterIO
import ArbiterServer
import Glibc

/// What a node checks with etcd before it listens: that its config is the cluster's, that
/// its name is its own, and that the fences start above what its journal handed out.
struct ClusterStartup {
    let setup: ClusterSetup
    let log: ServerLog

    /// Before listening: publish this node's config or compare it with the cluster's, and
    /// raise the fence keys to what a journal handed out. Throws what the operator must read.
    func prepare(panels: [PanelConfig], journalFences: [String: UInt64]) throws(ClusterStartFailure) {
        let config = ClusterConfig(panels: panels, clusterKey: setup.key)
        let answer: EtcdTxnResponse
        do {
            answer = try setup.control.txn(config.publishTxn(keys: setup.keys))
        } catch {
            throw etcdDidNotAnswer(error)
        }
        if let refusal = config.verdict(on: answer, node: setup.node) { throw ClusterStartFailure(refusal) }
        log.info("cluster config agreed", ["node": setup.node, "digest": config.digest])
        try claimName()
        guard !journalFences.isEmpty else { return }
        do {
            let raised = try FenceSeed.seed(journalFences, etcd: setup.control, keys: setup.keys)
            log.info("fences seeded from the journal", ["panels": raised.map { "\($0.key):\($0.value)" }.sorted().joined(separator: ",")])
        } catch {
            throw ClusterStartFailure("could not seed the fences from the journal in etcd at \(setup.endpointsDescription) (\(error))")
        }
    }

    private func etcdDidNotAnswer(_ error: any Error) -> ClusterStartFailure {
        // An error etcd answered with is no "did not answer": it is up and refuses.
        if let error = error as? EtcdError, case .server = error {
            let next = EtcdRefusal.whatToDo("\(error)").map { "; \($0)" } ?? ""
            return ClusterStartFailure("etcd at \(setup.endpointsDescription) refused this node's first write (\(error))\(next)")
        }
        return ClusterStartFailure("etcd did not answer at \(setup.endpointsDescription) (\(error)); is etcd running, and is --cluster right?")
    }

    /// Refuses to start under a name another live node uses (`NodeNameCheck`); waits, at
    /// most the TTL and a second, for a dead process's registration at another address to
    /// lapse.
    private func claimName() throws(ClusterStartFailure) {
        let started = Instant(milliseconds: setup.clock.milliseconds())
        var logged = false
        // Bounded: the verdict is `.wait` only until the lapse time has passed.
        while true {
            let registered: String?
            do {
                registered = try setup.control.range(.key(setup.keys.node(setup.node))).kvs.first?.valueText
            } catch {
                throw etcdDidNotAnswer(error)
            }
            let waited = Instant(milliseconds: setup.clock.milliseconds()).since(started)
            switch NodeNameCheck.verdict(registered: registered, advertise: setup.advertise, waitedMilliseconds: waited, ttlSeconds: setup.timing.ttlSeconds) {
            case .free:
                return
            case .inUse(let address):
                throw ClusterStartFailure(
                    "node name \(setup.node) is in use by a live node at \(address): its registration was kept alive for \(waited) ms "
                        + "(longer than the \(setup.timing.ttlSeconds) s lease TTL); give this node another --node, or stop that one")
            case .wait:
                if !logged {
                    log.info("waiting for an earlier registration of this node name to lapse", ["node": setup.node, "address": registered ?? "-"])
                    logged = true
                }
                usleep(100_000)
            }
        }
    }
}
