/// Cluster mode (issue 11, docs/CLUSTER.md): when a panel's leader changes, every member
/// reads `RELEASED <p> <b> reason=failover` for each grant of the old term it knew of,
/// outside the seq chain, then the new term's snapshot (`OK JOIN ... term=<t> seq=<s>`),
/// whose seq starts a new chain. The rules:
///
/// - a failover release names a grant that must be open (or already ended by another
///   member's copy of the same release). It ends the grant for that member only: the
///   model leaves it open, since a node that lost frames from a living leader resyncs its
///   members the same way and the term goes on (docs/CLUSTER.md), and a new term's
///   snapshot starts the model afresh anyway; a FIRED of an old grant in the new term is
///   one too many (it has no open PRESSED there);
/// - after it, nothing but the new snapshot;
/// - every fence of a later term is above every fence of an earlier term, whatever order
///   the members read them in;
/// - the model follows the newest term: old-term grants are all ended by the failover.
extension SafetyChecker {
    func failover(_ stream: Int, _ m: WireMessage) {
        guard streams[stream].joined else {
            return violate(.failover, "RELEASED reason=failover before the JOIN reply", [describe(stream, m)])
        }
        streams[stream].failedOver = true
        if handOffs.remove(m.fence) != nil { handOffsEnded.insert(m.fence) }
        // The owner's own record of the grant stays: after a same-term resync the grant
        // goes on, and its STOPPED or RELEASED reason=up still follows the reply to the
        // owner's UP (nemesis seed 28 read them as out of order with the record gone). A
        // new term's grants have other fences, and the next GRANTED replaces the record.
        guard streams[stream].term == modelTerm, modelStarted, m.button >= 0, Int(m.button) < buttons.count else { return }
        let g = buttons.groups[Int(m.button)]
        if open[g].contains(where: { $0.pressed.button == m.button && ($0.preexisting || $0.pressed.fence == m.fence) }) {
            failoverEnded.insert(m.fence)
        } else if !failoverEnded.contains(m.fence), nextApply >= streams[stream].expected {
            // (Only once the model applied everything this member read: else its PRESSED
            // may still be waiting in the window for a gap another member fills.)
            if let seq = releasedAt[m.fence], seq >= streams[stream].expected {
                // The model has the grant's RELEASED from another member (one on the dying
                // leader's node read it), but this member never did: the leader died before
                // that event reached this member's node, which still owed it the failover
                // release of a grant it knew as open.
                return
            }
            violate(.failover, "RELEASED reason=failover for a grant that is not open", [describe(stream, m)])
        }
    }

    /// The model applied `m`, a RELEASED of its term.
    func noteReleased(_ m: WireMessage) {
        if m.reason == .disconnect, handOffs.remove(m.fence) != nil { handOffsEnded.insert(m.fence) }
        releasedAt[m.fence] = m.seq
        guard releasedAt.count > 65_536 else { return }
        let oldest = oldestNeeded()
        releasedAt = releasedAt.filter { $0.value >= oldest }
    }

    /// The model moves to a newer term at its first snapshot.
    func startTerm(_ term: Int64, at seq: Int64, fence: Int64, pressed: [Int32]) {
        modelTerm = term
        window = SeqWindow()
        open = Array(repeating: [], count: buttons.groupNames.count)
        // A fair group's line and round belonged to the old leader's core.
        fair = Array(repeating: FairGroup(), count: buttons.groupNames.count)
        fairDecisionSeq = -1
        failoverEnded = []
        releasedAt = [:]
        // Old-term replies whose events the failover cut off are not the new term's.
        unmatchedGrants = [:]
        unmatchedPresses = [:]
        idleSnapshotSeq = -1
        let floor = lastFence
        startModel(at: seq, fence: max(floor, fence), pressed: pressed)
    }

    /// Fences of different terms never interleave.
    func checkTermFence(_ stream: Int, _ m: WireMessage) {
        let term = streams[stream].term
        for (other, range) in termFences where other != term {
            if other < term, range.upperBound >= m.fence {
                violate(
                    .failover, "fence \(m.fence) of term \(term) is not above fence \(range.upperBound) of the earlier term \(other)", [describe(stream, m)])
            } else if other > term, range.lowerBound <= m.fence {
                violate(.failover, "fence \(m.fence) of term \(term) is not below fence \(range.lowerBound) of the later term \(other)", [describe(stream, m)])
            }
        }
        let range = termFences[term].map { min($0.lowerBound, m.fence)...max($0.upperBound, m.fence) } ?? m.fence...m.fence
        termFences[term] = range
    }
}
