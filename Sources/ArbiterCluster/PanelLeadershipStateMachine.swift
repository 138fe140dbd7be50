import ArbiterCore

/// One panel's leadership on one node: events in, actions out, in the manner of
/// async-http-client's HTTP1ConnectionStateMachine. It never calls etcd and never reads a
/// clock; every event carries `now` from the node's monotonic clock.
///
/// The first thing every event does is compare `now` with the lease's safe deadline: a
/// node that wakes from a pause (SIGSTOP, a stall, a frozen VM) finds the deadline passed
/// and stops deciding before it looks at whatever the event brought.
///
/// A node decides for a panel only in `leading`, and only while `canDecide(now:)`; it gets
/// there by winning the election key *and* reserving a fence block under that term, so a
/// new leader's fences start above every block ever reserved.
public struct PanelLeadershipStateMachine: Sendable {
    public enum State: Equatable, Sendable {
        /// Not leading. `leader` is the election key's holder as last seen; nil when vacant
        /// or not yet known. It may be this node itself after a step-down while its key lived on.
        case following(leader: LeaderInfo?)
        /// The create-iff-absent transaction is in flight.
        case campaigning
        /// Elected in `term`; not deciding until a fence block is reserved.
        case reserving(term: Int64)
        case leading(term: Int64, fences: FenceBlock)
        /// Stopped deciding; the guarded delete of the election key is in flight.
        case resigning(term: Int64)
    }

    public let panel: String
    public let node: String
    public private(set) var state: State = .following(leader: nil)
    public private(set) var leaseID: Int64?
    public private(set) var safeUntil: Instant?
    /// The last term this node decided in. Its key may outlive the step-down (a lease that
    /// etcd kept through its own outage); that key is then given up, not taken up again:
    /// members were told the term ended (failover releases, an idle snapshot), and a second
    /// reign under the same `term=` would restart the seq chain they hold for it.
    public private(set) var decidedTerm: Int64?

    public init(panel: String, node: String) {
        self.panel = panel
        self.node = node
    }

    // MARK: Queries

    /// The fence block to decide with, or nil if this node must not decide now.
    public func canDecide(now: Instant) -> FenceBlock? {
        switch state {
        case .leading(_, let fences): isSafe(now) ? fences : nil
        case .following, .campaigning, .reserving, .resigning: nil
        }
    }

    /// Whether this node holds or is trying to hold the panel, for the spreading quota.
    public var countsTowardQuota: Bool {
        switch state {
        case .campaigning, .reserving, .leading: true
        case .following, .resigning: false
        }
    }

    public var isVacant: Bool {
        switch state {
        case .following(let leader): leader == nil
        case .campaigning, .reserving, .leading, .resigning: false
        }
    }

    // MARK: Lease

    public mutating func leaseRenewed(id: Int64, safeUntil: Instant, now: Instant) -> [PanelLeadershipAction] {
        if leaseID != id {
            // A new lease: anything held under the old one is gone with it.
            var actions = leaseLost(now: now)
            leaseID = id
            self.safeUntil = safeUntil
            actions += checkDeadline(now)
            return actions
        }
        self.safeUntil = safeUntil
        return checkDeadline(now)
    }

    public mutating func leaseLost(now: Instant) -> [PanelLeadershipAction] {
        leaseID = nil
        safeUntil = nil
        switch state {
        case .following(let leader):
            guard let leader, leader.node == node else { return [] }
            state = .following(leader: nil)
            return [.follow(nil)]
        case .campaigning:
            state = .following(leader: nil)
            return []
        case .reserving:
            state = .following(leader: nil)
            return [.follow(nil)]
        case .leading(let term, _):
            state = .following(leader: nil)
            return [.stopDeciding(term: term, reason: .leaseLost), .follow(nil)]
        case .resigning:
            state = .following(leader: nil)
            return [.follow(nil)]
        }
    }

    /// Nothing else happened; time passed.
    public mutating func tick(now: Instant) -> [PanelLeadershipAction] {
        checkDeadline(now)
    }

    // MARK: Election

    /// The driver would like this node to lead the panel (it is under its quota).
    public mutating func wantsToLead(now: Instant) -> [PanelLeadershipAction] {
        var actions = checkDeadline(now)
        switch state {
        case .following(let leader):
            if leader == nil, isSafe(now) {
                state = .campaigning
                actions.append(.campaign)
            }
        case .campaigning, .reserving, .leading, .resigning:
            break
        }
        return actions
    }

    public mutating func campaignWon(term: Int64, now: Instant) -> [PanelLeadershipAction] {
        var actions = checkDeadline(now)
        switch state {
        case .campaigning:
            actions += adopt(LeaderInfo(node: node, term: term, lease: leaseID ?? 0), now: now)
        case .following, .reserving, .leading, .resigning:
            break
        }
        return actions
    }

    public mutating func campaignLost(to leader: LeaderInfo?, now: Instant) -> [PanelLeadershipAction] {
        var actions = checkDeadline(now)
        switch state {
        case .campaigning:
            state = .following(leader: leader)
            actions.append(.follow(leader))
        case .following, .reserving, .leading, .resigning:
            break
        }
        return actions
    }

    /// The campaign's outcome is unknown (etcd did not answer); the next observation of
    /// the election key settles it.
    public mutating func campaignFailed(now: Instant) -> [PanelLeadershipAction] {
        var actions = checkDeadline(now)
        switch state {
        case .campaigning:
            state = .following(leader: nil)
            actions.append(.follow(nil))
        case .following, .reserving, .leading, .resigning:
            break
        }
        return actions
    }

    /// The election key as etcd has it now (nil: absent), from a range or a watch.
    public mutating func leaderObserved(_ leader: LeaderInfo?, now: Instant) -> [PanelLeadershipAction] {
        var actions = checkDeadline(now)
        switch state {
        case .following(let known):
            if let leader, leader.node == node, leader.lease == leaseID, leaseID != nil, isSafe(now) {
                if leader.term == decidedTerm {
                    // A key that outlived a step-down after this node decided under it:
                    // deleted, and the next campaign starts a new term (`decidedTerm`).
                    state = .resigning(term: leader.term)
                    actions.append(.resign(term: leader.term))
                } else {
                    // An unanswered campaign that did win, or a key that outlived a step-down
                    // while its fences were still being reserved: nothing was decided under
                    // it, so taking it up again is safe; fences come first.
                    actions += adopt(leader, now: now)
                }
            } else if known != leader {
                state = .following(leader: leader)
                actions.append(.follow(leader))
            }
        case .campaigning:
            // The campaign's own answer decides.
            break
        case .reserving(let term):
            if leader?.term != term {
                state = .following(leader: leader)
                actions.append(.follow(leader))
            }
        case .leading(let term, _):
            if leader?.term != term {
                state = .following(leader: leader)
                actions += [.stopDeciding(term: term, reason: .deposed), .follow(leader)]
            }
        case .resigning(let term):
            if leader?.term != term {
                state = .following(leader: leader)
                actions.append(.follow(leader))
            }
        }
        return actions
    }

    // MARK: Fences

    public mutating func fencesReserved(_ block: FenceBlock, now: Instant) -> [PanelLeadershipAction] {
        var actions = checkDeadline(now)
        switch state {
        case .reserving(let term) where block.term == term:
            state = .leading(term: term, fences: block)
            decidedTerm = term
            actions.append(.startDeciding(block))
        case .leading(let term, let fences) where block.term == term && block.first == fences.last + 1:
            let merged = FenceBlock(term: term, first: fences.first, last: block.last)
            state = .leading(term: term, fences: merged)
            actions.append(.extendFences(merged))
        case .following, .campaigning, .reserving, .leading, .resigning:
            // A block reserved for a term that is over is never used: fences skip it.
            break
        }
        return actions
    }

    /// The term-guarded reservation failed. `deposed`: the guard failed, the election key
    /// is not ours in that term any more; otherwise etcd did not answer and the driver retries.
    public mutating func fenceReservationFailed(term failed: Int64, deposed: Bool, now: Instant) -> [PanelLeadershipAction] {
        var actions = checkDeadline(now)
        guard deposed else { return actions }
        switch state {
        case .reserving(let term) where term == failed:
            state = .following(leader: nil)
            actions.append(.follow(nil))
        case .leading(let term, _) where term == failed:
            state = .following(leader: nil)
            actions += [.stopDeciding(term: term, reason: .deposed), .follow(nil)]
        case .following, .campaigning, .reserving, .leading, .resigning:
            break
        }
        return actions
    }

    // MARK: Resigning

    /// Give the panel up (spreading or shutdown): stop deciding first, then delete the key.
    public mutating func resign(reason: StepDownReason, now: Instant) -> [PanelLeadershipAction] {
        var actions = checkDeadline(now)
        switch state {
        case .reserving(let term):
            state = .resigning(term: term)
            actions.append(.resign(term: term))
        case .leading(let term, _):
            state = .resigning(term: term)
            actions += [.stopDeciding(term: term, reason: reason), .resign(term: term)]
        case .following(let leader):
            // Our key may have outlived a step-down; give it up too.
            if let leader, leader.node == node, leader.lease == leaseID {
                state = .resigning(term: leader.term)
                actions.append(.resign(term: leader.term))
            }
        case .campaigning, .resigning:
            break
        }
        return actions
    }

    /// The guarded delete answered (whether it deleted or found the key already gone).
    public mutating func resignDone(now: Instant) -> [PanelLeadershipAction] {
        var actions = checkDeadline(now)
        switch state {
        case .resigning:
            state = .following(leader: nil)
            actions.append(.follow(nil))
        case .following, .campaigning, .reserving, .leading:
            break
        }
        return actions
    }

    // MARK: Private

    private func isSafe(_ now: Instant) -> Bool {
        guard let safeUntil else { return false }
        return now < safeUntil
    }

    private mutating func adopt(_ leader: LeaderInfo, now: Instant) -> [PanelLeadershipAction] {
        guard isSafe(now) else {
            state = .following(leader: leader)
            return []
        }
        state = .reserving(term: leader.term)
        return [.reserveFences(term: leader.term)]
    }

    /// Steps down if the deadline has passed: before anything else an event brings.
    private mutating func checkDeadline(_ now: Instant) -> [PanelLeadershipAction] {
        guard !isSafe(now) else { return [] }
        switch state {
        case .following, .campaigning, .resigning:
            return []
        case .reserving(let term):
            // The key may still be ours; it is taken up again once the lease is renewed.
            state = .following(leader: LeaderInfo(node: node, term: term, lease: leaseID ?? 0))
            return []
        case .leading(let term, _):
            state = .following(leader: LeaderInfo(node: node, term: term, lease: leaseID ?? 0))
            return [.stopDeciding(term: term, reason: .leaseDeadline)]
        }
    }
}
