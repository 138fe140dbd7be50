import ArbiterCore
import ArbiterIO
import ArbiterWire

/// Cluster mode, follower side: a resynchronisation in the same term. What the leader sent
/// may have been lost (a link dropped or fell silent, a hole in the events' seq, an answer
/// that never came), but the leader lives and its term goes on, so a grant the members
/// knew of may still stand. Each member is told `RELEASED ... reason=failover` only for
/// the grants its fresh snapshot no longer shows, right before that snapshot: an owner
/// whose grant still stands is never told it ended (before, it read the failover release
/// of its own grant, then the snapshot still showing it, then its `STOPPED reason=up`).
extension PanelHost {
    /// Unanswered commands get `ERROR unavailable`; with `rejoin`, the members join again
    /// and settle what they knew of with their new snapshots; without it (this node's
    /// lease lapsed: the leader has ended its sessions' grants, and nothing it sends can
    /// be trusted until the lease is safe again) every grant they knew of ends now.
    /// On `queue`.
    func resync(from node: String, because why: String, rejoin: Bool = true, flush: inout FlushList) {
        failInFlight(because: why, termEnded: false, flush: &flush)
        // The line goes on in the same term, but this node's waiters may have been taken
        // out of it, or handed the group unheard: their DOWNs go again (`PanelHost+Waits`).
        if rejoin { rewait(at: node, address: clusterState.leaderAddress) }
        guard rejoin, !members.isEmpty || !clusterState.pendingJoins.isEmpty else {
            return owedFailover(newTerm: clusterState.leaderTerm, flush: &flush)
        }
        // A member still waiting for the snapshot of an earlier resync has waited long
        // enough (this one may be the answer deadline of its re-join): its grants end now.
        let grants = restartStream(term: clusterState.leaderTerm, flush: &flush)
        if !grants.isEmpty {
            for session in members.keys { clusterState.owedReleases[session] = grants }
            clusterState.owedUncounted.formUnion(grants.map(\.fence))
        }
        self.rejoin(at: node, address: clusterState.leaderAddress)
    }

    /// The leader's stream starts again (a new term, or the same after a loss): its term
    /// gate moves, any next event is taken, members still owed releases read them, and
    /// the grants the members knew of are handed back (by button) for the caller to end.
    func restartStream(term: Int64?, flush: inout FlushList) -> [PanelClusterState.OwedRelease] {
        _ = clusterState.inbox.leaderChanged(panel: config.id, term: term)
        clusterState.nextEventSeq = nil
        releaseOwed(flush: &flush)
        let grants = clusterState.knownGrants.sorted { $0.key < $1.key }.map { (button: $0.key, owner: $0.value.owner, fence: $0.value.fence) }
        clusterState.knownGrants = [:]
        return grants
    }

    /// A member's new snapshot came (`grants`: what it shows held): the grants it knew of
    /// that the snapshot does not show on the same button with the same fence ended while
    /// it could not hear; it is told so before the snapshot. The fence alone names a grant
    /// (each grant gets a higher one), so owners' names are not compared. On `queue`.
    func settleOwed(_ session: SessionID, on connection: Connection, by grants: [Int: (owner: String, fence: UInt64)], flush: inout FlushList) {
        guard let owed = clusterState.owedReleases.removeValue(forKey: session) else { return }
        let ended = owed.filter { known in grants[known.button]?.fence != known.fence }
        writeFailoverReleases(ended, to: connection, flush: &flush)
        countOwed(ended)
    }

    /// Every member still owed releases from a same-term resync reads them now (the term
    /// ended, another resync began, or the lease lapsed). On `queue`.
    func releaseOwed(flush: inout FlushList) {
        guard !clusterState.owedReleases.isEmpty else { return }
        for session in clusterState.owedReleases.keys.sorted() {
            guard let connection = clusterState.pendingJoins[session] ?? members[session] else { continue }
            releaseOwed(to: session, on: connection, flush: &flush)
        }
        clusterState.owedReleases = [:]
        clusterState.owedUncounted = []
    }

    /// One member's owed releases, now (it will get no snapshot to settle them by).
    func releaseOwed(to session: SessionID, on connection: Connection, flush: inout FlushList) {
        guard let owed = clusterState.owedReleases.removeValue(forKey: session) else { return }
        writeFailoverReleases(owed, to: connection, flush: &flush)
        countOwed(owed)
    }

    /// `RELEASED <p> <b> reason=failover ...` for each of `grants`, to one connection.
    func writeFailoverReleases(_ grants: [PanelClusterState.OwedRelease], to connection: Connection, flush: inout FlushList) {
        guard !grants.isEmpty else { return }
        let panel = config
        flush.append(to: connection, panel: index) { out, format in
            for grant in grants {
                MessageEncoder.encodeFailoverRelease(panel: panel, button: grant.button, owner: grant.owner, fence: grant.fence, format: format, into: &out)
            }
        }
    }

    /// Owed releases written: each grant counts once, however many members were told.
    private func countOwed(_ grants: [PanelClusterState.OwedRelease]) {
        for grant in grants where clusterState.owedUncounted.remove(grant.fence) != nil {
            counters.releases[ReleaseReason.failover.index] += 1
        }
    }
}
