/// Moving a site from one node to a cluster: the transaction that raises a panel's fence
/// key to at least what the single-node journal had reserved, so clients that saw the
/// single-node fences never see lower ones from the cluster.
///
///     if fence.mod_revision == <as read>   then put fence = journal's reservation
///
/// A compare-and-swap, never a blind put: a fence key that is already higher is left alone
/// (the initializer returns nil), and one that changed meanwhile fails the compare, so the
/// caller reads again. Run it before this node's first term. A leader already holding a
/// block below the seed keeps using that block until its next reservation, which then
/// starts above the seed: seed before the cluster serves the panel.
public struct FenceSeed: Equatable, Sendable {
    public var txn: EtcdTxn
    public var seeded: UInt64

    /// `current` is the fence key as read (nil: absent); `journalFence` the journal's
    /// highest reservation for the panel.
    public init?(current: EtcdKeyValue?, journalFence: UInt64, fenceKey: String) throws(EtcdError) {
        let reserved: UInt64
        if let current {
            guard let value = UInt64(current.valueText) else { throw .malformed("\(fenceKey) holds \(current.valueText)") }
            reserved = value
        } else {
            reserved = 0
        }
        guard journalFence > reserved else { return nil }
        seeded = journalFence
        txn = EtcdTxn(
            compare: [.modRevision(fenceKey, .equal, current?.modRevision ?? 0)],
            success: [.put(fenceKey, String(journalFence))])
    }

    /// Seeds every panel of `journalFences` (panel to highest reserved fence), reading and
    /// retrying a compare that lost a race, at most `attempts` times per panel. Returns the
    /// panels whose key was raised, with the value written.
    public static func seed(_ journalFences: [String: UInt64], etcd: any EtcdAPI, keys: ClusterKeys, attempts: Int = 5) throws(EtcdError) -> [String: UInt64] {
        var raised: [String: UInt64] = [:]
        for panel in journalFences.keys.sorted() {
            let fenceKey = keys.fence(panel)
            var done = false
            for _ in 0..<max(1, attempts) where !done {
                let current = try etcd.range(.key(fenceKey)).kvs.first
                guard let seed = try FenceSeed(current: current, journalFence: journalFences[panel] ?? 0, fenceKey: fenceKey) else {
                    done = true
                    break
                }
                if try etcd.txn(seed.txn).succeeded {
                    raised[panel] = seed.seeded
                    done = true
                }
            }
            guard done else { throw .unavailable("the fence key of \(panel) kept changing while it was seeded") }
        }
        return raised
    }
}
