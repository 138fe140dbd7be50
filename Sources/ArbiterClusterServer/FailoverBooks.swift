import ArbiterServer
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
///
/// The same books serve a term's end: the failover releases the members are owed
/// (`owedFailover`), `ERROR unavailable` for each command the leader will not answer now
/// (`failInFlight`), and the answers to releases of grants a failover ended
/// (`FailoverBooks+EndedGrants`).
struct FailoverBooks: ClusterPanelPart {
    let panel: ClusterPanel

    /// Unanswered commands get `ERROR unavailable`; with `rejoin`, the members join again
    /// and settle what they knew of with their new snapshots; without it (this node's
    /// lease lapsed: the leader has ended its sessions' grants, and nothing it sends can
    /// be trusted until the lease is safe again) every grant they knew of ends now.
    /// On `queue`.
    func resync(from node: String, because why: String, rejoin: Bool = true, flush: inout FlushList) {
        failInFlight(because: why, termEnded: false, flush: &flush)
        // The line goes on in the same term, but this node's waiters may have been taken
        // out of it, or handed the group unheard: their DOWNs go again (`QueueWaits`).
        if rejoin {
            resendGone(to: node)
            waits.rewait(at: node, address: panel.clusterState.leader.address)
        }
        guard rejoin, !members.isEmpty || !panel.clusterState.following.pendingJoins.isEmpty else {
            return owedFailover(newTerm: panel.clusterState.leader.term, flush: &flush)
        }
        // A member still waiting for the snapshot of an earlier resync has waited long
        // enough (this one may be the answer deadline of its re-join): its grants end now.
        let grants = restartStream(term: panel.clusterState.leader.term, flush: &flush)
        if !grants.isEmpty {
            for session in members.keys { panel.clusterState.following.owedReleases[session] = grants }
            panel.clusterState.following.owedUncounted.formUnion(grants.map(\.fence))
        }
        joins.rejoin(at: node, address: panel.clusterState.leader.address)
    }

    /// The leader's stream starts again (a new term, or the same after a loss): its term
    /// gate moves, any next event is taken, members still owed releases read them, and
    /// the grants the members knew of are handed back (by button) for the caller to end.
    func restartStream(term: Int64?, flush: inout FlushList) -> [FollowerBooks.OwedRelease] {
        _ = panel.clusterState.following.inbox.leaderChanged(panel: config.id, term: term)
        panel.clusterState.following.nextEventSeq = nil
        releaseOwed(flush: &flush)
        let grants = panel.clusterState.following.knownGrants.sorted { $0.key < $1.key }.map { (button: $0.key, owner: $0.value.owner, fence: $0.value.fence) }
        panel.clusterState.following.knownGrants = [:]
        return grants
    }

    /// A member's new snapshot came (`grants`: what it shows held): the grants it knew of
    /// that the snapshot does not show on the same button with the same fence ended while
    /// it could not hear; it is told so before the snapshot. The fence alone names a grant
    /// (each grant gets a higher one), so owners' names are not compared. On `queue`.
    func settleOwed(_ session: SessionID, on connection: Connection, by grants: [Int: (owner: String, fence: UInt64)], flush: inout FlushList) {
        guard let owed = panel.clusterState.following.owedReleases.removeValue(forKey: session) else { return }
        let ended = owed.filter { known in grants[known.button]?.fence != known.fence }
        writeFailoverReleases(ended, to: connection, flush: &flush)
        countOwed(ended)
    }

    /// Every member still owed releases from a same-term resync reads them now (the term
    /// ended, another resync began, or the lease lapsed). On `queue`.
    func releaseOwed(flush: inout FlushList) {
        guard !panel.clusterState.following.owedReleases.isEmpty else { return }
        for session in panel.clusterState.following.owedReleases.keys.sorted() {
            guard let connection = panel.clusterState.following.pendingJoins[session] ?? members[session] else { continue }
            releaseOwed(to: session, on: connection, flush: &flush)
        }
        panel.clusterState.following.owedReleases = [:]
        panel.clusterState.following.owedUncounted = []
    }

    /// One member's owed releases, now (it will get no snapshot to settle them by).
    func releaseOwed(to session: SessionID, on connection: Connection, flush: inout FlushList) {
        guard let owed = panel.clusterState.following.owedReleases.removeValue(forKey: session) else { return }
        writeFailoverReleases(owed, to: connection, flush: &flush)
        countOwed(owed)
    }

    /// `RELEASED <p> <b> reason=failover ...` for each of `grants`, to one connection.
    func writeFailoverReleases(_ grants: [FollowerBooks.OwedRelease], to connection: Connection, flush: inout FlushList) {
        guard !grants.isEmpty else { return }
        let panel = config
        flush.append(to: connection, panel: index) { out, format in
            for grant in grants {
                MessageEncoder.encodeFailoverRelease(panel: panel, button: grant.button, owner: grant.owner, fence: grant.fence, format: format, into: &out)
            }
        }
    }

    /// Owed releases written: each grant counts once, however many members were told.
    private func countOwed(_ grants: [FollowerBooks.OwedRelease]) {
        for grant in grants where panel.clusterState.following.owedUncounted.remove(grant.fence) != nil {
            counters.releases[ReleaseReason.failover.index] += 1
        }
    }

    /// Ends, for the local members, the grants of the term that just ended that they were
    /// told of, unless the old leader's own failover notice already did.
    func owedFailover(newTerm: Int64?, flush: inout FlushList) {
        // Only a term etcd shows: a node that lost sight of its leader (its own lease lapsed)
        // follows nobody for a while, and the grants may stand.
        if let newTerm { sessionGrantsEnded(inTerms: { $0 < newTerm }) }
        let grants = restartStream(term: newTerm, flush: &flush)
        guard !grants.isEmpty else { return }
        for member in members.values { writeFailoverReleases(grants, to: member, flush: &flush) }
        counters.releases[ReleaseReason.failover.index] += grants.count
    }

    // MARK: When the leader can no longer be trusted to answer

    /// Answers every relayed command still unanswered with `ERROR unavailable`: its
    /// answer can no longer come (a grant it may have got ended with the failover).
    /// `termEnded`: the leader changed, so a grant the command got has ended; otherwise
    /// (a dropped link, lost frames, a lapsed lease) it may still stand, as the snapshot
    /// that follows shows.
    func failInFlight(because why: String, termEnded: Bool = true, flush: inout FlushList) {
        guard !panel.clusterState.following.inFlight.isEmpty else { return }
        let grant = termEnded ? " (a grant it got ended with the failover)" : " (a grant it got may still be held: the panel's snapshot shows it)"
        let message = "\(why); it may or may not have been done\(grant); try again in a second or two"
        let now = clock.now().milliseconds
        for (session, pending) in panel.clusterState.following.inFlight.sorted(by: { $0.key < $1.key }) {
            // A session's own JOIN waits for the next leader instead (it stays pending).
            for entry in pending where entry.isJoin && panel.clusterState.following.pendingJoins[session] != nil {
                joins.parkJoin(entry.parked(now: now), for: session, flush: &flush)
            }
            let waiting = pending.filter { $0.isSessions && !($0.isJoin && panel.clusterState.following.pendingJoins[session] != nil) }
            guard !waiting.isEmpty, let connection = joins.joiningConnection(session) else { continue }
            for entry in waiting {
                flush.answer(entry.slot, to: connection, panel: index) { out, _ in
                    MessageEncoder.encode(.error(.unavailable, message), format: entry.format, id: entry.id, into: &out)
                }
            }
        }
        panel.clusterState.following.inFlight = [:]
    }

    /// A relayed command unanswered for `ClusterSetup.answerTimeoutMs`: its answer was lost
    /// on the way, and nothing else would ever say so. Seen under load (`bench/cluster.sh`,
    /// fan-out over three nodes): a follower closed its link to a busy leader as silent and
    /// dialled again; the leader went on writing the answers to its members' re-joins to
    /// the old link until it noticed the close, and dropped them then, while the new link
    /// stayed up. Those members waited for ever and heard no event. The panel
    /// resynchronises as after a dropped link: what waits is answered `ERROR unavailable`,
    /// the members join again. On `queue` (`ClusterContext`'s node timer).
    func checkAnswers() {
        assertOnQueue()
        joins.expireJoins()
        guard let cluster, let leader = panel.followedLeader else { return }
        let limit = cluster.setup.answerTimeoutMs
        let now = clock.now().milliseconds
        guard panel.clusterState.following.inFlight.values.contains(where: { $0.contains { now - $0.sentAtMs >= limit } }) else { return }
        cluster.log.warning("no answer from a panel's leader in time: the panel resynchronises", ["panel": config.id, "leader": leader, "ms": "\(limit)"])
        var flush = FlushList()
        resync(from: leader, because: "panel \(config.id)'s leader \(leader) did not answer within \(limit) ms", flush: &flush)
        finishBatch(&flush)
    }

    /// The last link to `node` dropped. If it leads this panel, what was sent to it is
    /// lost, and so are the events it sent meanwhile; and if it is alive it has ended this
    /// node's sessions' grants. Members are told the grants they knew of ended, then join
    /// again (a new link is dialled for it) and get a fresh snapshot: the truth again.
    func leaderLinkDown(_ node: String) {
        assertOnQueue()
        guard panel.clusterState.leader.node == node, panel.clusterState.block == nil else { return }
        var flush = FlushList()
        resync(from: node, because: "the link to panel \(config.id)'s leader \(node) dropped before it answered", flush: &flush)
        finishBatch(&flush)
    }

    /// This node's lease lapsed (`ClusterContext.beginLapse`): what the leader would still
    /// answer or send cannot be trusted, so a panel it follows answers what waits and tells
    /// its members the grants they knew of ended, now. On `queue`.
    func leaseLapsed() {
        assertOnQueue()
        guard let leader = panel.followedLeader else { return }
        var flush = FlushList()
        resync(
            from: leader, because: "this node's lease lapsed (it was paused or cut off from etcd) before panel \(config.id)'s leader \(leader) answered",
            rejoin: false, flush: &flush)
        finishBatch(&flush)
    }

    /// The lease is safe again, first step (`ClusterContext.awaitSafeLease`): the same, and
    /// the members wait to join again, so nothing the leader sends reaches them before
    /// their fresh snapshot. The node reads leaders' frames again only after every panel
    /// took this step, and the re-joins are sent only after that (`rejoinAfterLapse`):
    /// sent earlier, their answers could arrive while frames are still dropped, and the
    /// members would wait for them for ever. On `queue`.
    func leaseRegained() {
        assertOnQueue()
        guard panel.followedLeader != nil else { return }
        leaseLapsed()
        joins.holdMembersForRejoin()
    }

    /// The second step: the members that wait join again at the leader; not if another
    /// lapse began meanwhile (its own first step will lead here again). On `queue`.
    func rejoinAfterLapse() {
        assertOnQueue()
        guard let cluster, !cluster.isLapsed, let leader = panel.followedLeader else { return }
        resendGone(to: leader)
        waits.rewait(at: leader, address: panel.clusterState.leader.address)
        guard !panel.clusterState.following.pendingJoins.isEmpty else { return }
        joins.rejoin(at: leader, address: panel.clusterState.leader.address)
    }

    /// Tells `node` again of the local members that closed within the last
    /// `ClusterSetup.memberGraceMs`: their `sessionGone` may have been lost with the link
    /// this resync follows, and the leader would keep them as members until the grace
    /// ends. Only those that closed under the lease this node serves under now: a leader
    /// takes a lease it has not heard of for a new run of the node, and ends every session
    /// of the node's run it knows (CI caught it: a restarted leader read the current lease
    /// first, then a member's older one, ended the node's sessions and dropped its JOINs
    /// from then on as a replaced run's). A run replaced since had its sessions ended by
    /// the leader anyway. A leader that heard the first `sessionGone` ignores this one.
    /// On `queue`.
    func resendGone(to node: String) {
        guard let cluster else { return }
        forgetGone()
        let lease = cluster.synchronisedLease
        for (session, gone) in panel.clusterState.following.goneMembers.sorted(by: { $0.key < $1.key }) where gone.lease == lease {
            tellGone(session, lease: gone.lease, to: node, cluster)
        }
    }

    /// Tells `node`, the panel's leader, that a local session closed, under `lease`. On `queue`.
    func tellGone(_ session: SessionID, lease: Int64, to node: String, _ cluster: ClusterContext) {
        cluster.send(
            .sessionGone(origin: cluster.node, session: UInt64(session.number), incarnation: cluster.setup.incarnation, lease: lease),
            toNode: node, address: panel.clusterState.leader.address)
    }

    /// Forgets the closed members older than the grace, which the leader has let go of by
    /// itself. On `queue`, every half second (the node timer) and before a resend.
    func forgetGone() {
        assertOnQueue()
        guard let cluster, !panel.clusterState.following.goneMembers.isEmpty else { return }
        let since = clock.now().milliseconds - cluster.setup.memberGraceMs
        panel.clusterState.following.goneMembers = panel.clusterState.following.goneMembers.filter { $0.value.atMs >= since }
    }
}
