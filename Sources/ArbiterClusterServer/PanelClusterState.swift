import ArbiterServer
import ArbiterCluster
import ArbiterClusterRuntime
import ArbiterCore
import ArbiterWire

/// One panel's cluster-mode state, owned by the panel's queue: whether this node decides
/// it (`standing`), who leads it, and the books each side keeps.
struct PanelClusterState {
    /// Leading (with the fences it decides with) or following.
    var standing = Standing.following
    /// Who leads the panel as etcd last showed it (this node included), and in which term.
    var leader = KnownLeader()
    /// What a node that follows the panel keeps of its own sessions' relayed commands and
    /// of the leader's stream.
    var following = FollowerBooks()
    /// What a node that leads the panel keeps of other nodes' sessions.
    var relayed = RelayedSessions()
    /// The grants this node's sessions got through a leader, and how they ended.
    var grants = SessionGrantBooks()
    /// The nodes known to read `typedEvent` frames (`ClusterFeatures.typedEvents`), as the
    /// node registrations last showed (`ClusterContext.checkNodes`): a leader sends the
    /// others `event` frames. Kept here so that relaying an event takes no lock.
    var typedEventNodes: Set<String> = []

    /// The fence block this node decides the panel with; nil while it follows.
    var block: FenceBlock? { deciding?.block }

    /// The leading state, to read or change in place; nil while following.
    var deciding: Deciding? {
        get {
            switch standing {
            case .leading(let deciding): deciding
            case .following: nil
            }
        }
        set { standing = newValue.map(Standing.leading) ?? .following }
    }
}

/// Whether this node decides a panel.
enum Standing {
    case following
    case leading(Deciding)
}

/// What a leading node decides a panel with.
struct Deciding {
    /// The fence block of this term it hands fences out of.
    var block: FenceBlock
    /// The runtime's last yes to deciding it (`Leadership.mayDecideNow`).
    var window: DecisionWindow? = nil
    /// When the next block was last asked for (at 80 % of this one), in ms of the panel's
    /// clock: asked again only after 500 ms, in case the reservation failed.
    var extensionAskedAt: Int64? = nil
    /// When this term's fences started being counted, and the highest fence then: the
    /// rate the next block is sized by (`FenceBlockSizing`).
    var rateMark: (at: Int64, fence: UInt64)
}

/// Who leads a panel as etcd last showed it (this node included), and in which term.
struct KnownLeader {
    var node: String?
    var address: String?
    var term: Int64?
}

/// A following node's books of its own sessions' relayed commands and the leader's stream.
struct FollowerBooks {
    /// Term fencing of what the leader's node sends (follower side).
    var inbox = RelayInbox()
    /// Follower, while a reactor visits the queue with a session's commands: the commands
    /// it relays, sent by that reactor once it has left the queue (`SessionRunner`). Sent
    /// from inside, a command's reply could come back while the queue was still held, and
    /// the link's thread then slept on the queue and had to be woken again. Nil outside
    /// such a visit: everything else is sent at once.
    var deferredSends: [DeferredSend]?
    typealias DeferredSend = (frame: [UInt8], node: String, address: String?, leaseEpoch: UInt64)
    /// Follower: the seq the leader's next event frame must carry; nil until one came
    /// after the last (re)start of the stream (a term, a first member, a re-join). A
    /// frame past it means frames were lost on a link that closed while the leader went
    /// on over a new one (`FollowerRelay.relayedFromLeader`).
    var nextEventSeq: UInt64?
    /// Follower: the last `RelayCommand.serial` this panel sent (each reply names its own).
    var lastSerial: UInt64 = 0
    /// Follower: the grants of the current term this node's members were told of, so that
    /// a leader change can end them with `reason=failover` even if the leader died.
    var knownGrants: [Int: (owner: String, fence: UInt64)] = [:]
    /// Follower: after a same-term resync, the grants each member knew of, until its fresh
    /// snapshot shows which of them still stand (`FailoverBooks.settleOwed`).
    var owedReleases: [SessionID: [OwedRelease]] = [:]
    /// The fences among `owedReleases` not counted in the panel's releases yet: each grant
    /// counts once, however many members are told.
    var owedUncounted: Set<UInt64> = []
    typealias OwedRelease = (button: Int, owner: String, fence: UInt64)
    /// Follower: what each local session sent the leader and has no answer to yet, in
    /// order (every relayed command gets exactly one reply). If the leader changes or its
    /// link drops first, each gets `ERROR unavailable` instead of waiting forever.
    var inFlight: [SessionID: [InFlight]] = [:]
    /// Follower: JOINs of local sessions waiting for a leader to be sent to.
    var parkedJoins: [SessionID: ParkedJoin] = [:]
    /// Follower: local sessions whose relayed JOIN has not been answered yet.
    var pendingJoins: [SessionID: Connection] = [:]
    /// The name and key a local member joined with, to join it again with a new leader.
    var memberIdentity: [SessionID: (name: String, key: String?)] = [:]
    /// Follower: local members that closed lately (when, on the panel's clock, ms, and the
    /// lease their `sessionGone` went under). That frame may have been lost with a link
    /// that dropped, and the leader keeps a member of a node whose link dropped for
    /// `ClusterSetup.memberGraceMs`, so it is sent again after each resync that joins the
    /// members again (`FailoverBooks.resendGone`): the member leaves at once, not 15 s later.
    var goneMembers: [SessionID: (atMs: Int64, lease: Int64)] = [:]
    /// Follower: the places of local sessions waiting in a queue group's line at the
    /// leader, from its QUEUED answers; each is told `DEQUEUED ... reason=failover` when
    /// the term that kept the line ends (`QueueWaits.endWaits`).
    var waitingPlaces: [SessionID: [WaitingPlace]] = [:]
    /// Follower: the name and key a local session pressed a fair group's button under,
    /// for its DEQUEUED line and its DOWN sent again (the connection's belong to its reactor).
    var waitNames: [SessionID: (name: String, key: String?)] = [:]
}

/// The grants this node's sessions were answered `GRANTED` for through a leader, and how
/// they ended (`FailoverBooks+EndedGrants`).
struct SessionGrantBooks {
    /// Follower: the grants each local session was answered `GRANTED` for through a leader
    /// (button: fence and term), until it lets go or the term ends (`FailoverBooks+EndedGrants`).
    var sessionGrants: [SessionID: [Int: (fence: UInt64, term: Int64)]] = [:]
    /// Local sessions' grants whose term a failover ended (button: fence, and how the
    /// grant ended: `failover` if it stood until then, else its own earlier end): their
    /// `UP` or `CANCEL` is answered `ended=<reason>` here, as a single node answers a grant
    /// that fired, since the new leader never knew them.
    var failoverEnded: [SessionID: [Int: (fence: UInt64, reason: ReleaseReason)]] = [:]
    /// Follower: local sessions' relayed grants the leader ended itself (timed out, fired,
    /// reset; button: fence, term and reason), from its `RELEASED` event or, on a node with
    /// no member of the panel, its `grantEnded` frame. While the term stands the leader
    /// answers their `UP`; once it ends they move to `failoverEnded` with their reason.
    var leaderEnded: [SessionID: [Int: (fence: UInt64, term: Int64, reason: ReleaseReason)]] = [:]
}

/// A leading node's books of other nodes' sessions.
struct RelayedSessions {
    /// Leader: every session relayed from another node that ran a command here, by node.
    var remoteSessions: [SessionID: String] = [:]
    /// Leader: relayed members, by node, and how many each node has: each event goes once
    /// to each node in `memberNodes`, in the frame it reads.
    var remoteMembers: [SessionID: String] = [:]
    var memberNodes: [String: MemberNode] = [:]
    /// Leader: relayed sessions waiting in a queue group's line, for their hand-off GRANTED.
    var remoteWaiters: [SessionID: RemoteRequester] = [:]
    /// Leader: relayed commands whose replies come later (a buzzer press waiting for its
    /// decision window, and what its session sent behind it), oldest first per session.
    var deferredReplies: [SessionID: [RemoteRequester]] = [:]
    /// Leader: relayed members kept through their node's link drop, each with when (the
    /// panel's clock, ms); one that does not JOIN again within `ClusterSetup.
    /// memberGraceMs` leaves (`LeaderDuties.checkKeptMembers`).
    var keptMembers: [SessionID: Int64] = [:]

    /// `typedEvents`: whether `node` reads `typedEvent` frames, as last known.
    mutating func addRemoteMember(_ session: SessionID, node: String, typedEvents: Bool) {
        guard remoteMembers.updateValue(node, forKey: session) == nil else { return }
        memberNodes[node, default: MemberNode(typedEvents: typedEvents)].members += 1
    }

    mutating func removeRemoteMember(_ session: SessionID) {
        keptMembers[session] = nil
        guard let node = remoteMembers.removeValue(forKey: session), var entry = memberNodes[node] else { return }
        entry.members -= 1
        memberNodes[node] = entry.members > 0 ? entry : nil
    }

    /// The nodes that read `typedEvent` frames, newly read from their registrations.
    mutating func typedEventNodes(_ nodes: Set<String>) {
        for (node, entry) in memberNodes where entry.typedEvents != nodes.contains(node) {
            memberNodes[node]?.typedEvents.toggle()
        }
    }

    /// Forgets everything relayed to this node as a leader (its core was dropped).
    mutating func forgetRemoteSessions() {
        remoteSessions = [:]
        remoteMembers = [:]
        memberNodes = [:]
        remoteWaiters = [:]
        deferredReplies = [:]
        keptMembers = [:]
    }
}

/// A node with members of a panel this node leads.
struct MemberNode {
    var members = 0
    /// Whether it reads `typedEvent` frames (`ClusterFeatures.typedEvents`): known per node
    /// here so that relaying an event looks nothing up.
    var typedEvents: Bool
}

/// A relayed command not answered yet: how its session wants the answer.
struct InFlight {
    /// What the command is and who waits for its answer.
    enum Kind {
        /// The session's own command; its reply fills `slot` in the connection's output
        /// (`ReplyOrder`).
        case command(slot: UInt64)
        /// The session's own DOWN of `button`: its `GRANTED` answer is noted in `sessionGrants`.
        case down(slot: UInt64, button: Int)
        /// The session's own JOIN, sent `attempt` times so far: at a leader change it waits
        /// for the next leader instead of being answered `ERROR unavailable`. `since`: when
        /// the session sent it (ms), kept through every re-send, so that it is refused
        /// `ClusterSetup.joinWaitMs` after that (`MemberJoins.expireJoins`). `slot` is nil
        /// for a JOIN whose answer has no place to fill.
        case join(slot: UInt64?, since: Int64, attempt: Int)
        /// A JOIN this node sent for the session itself after a leader change, refused
        /// `attempt` times already (a leader not deciding yet): nobody waits.
        case rejoin(attempt: Int)
        /// A waiter's DOWN this node sent again after a resynchronisation
        /// (`QueueWaits.rewait`), for the button it waits for: nobody waits for its answer.
        case rewait(button: Int)
        /// A CANCEL this node sent for a hand-off nobody waited for (`QueueWaits.
        /// handOffExpected`): its answer is nobody's.
        case cleanup
    }

    var format: WireFormat
    var id: CommandID?
    var kind: Kind
    /// Its `RelayCommand.serial`, which its reply names.
    var serial: UInt64
    /// When it was sent (the server's clock, ms): unanswered for
    /// `ClusterSetup.answerTimeoutMs`, the panel resynchronises.
    var sentAtMs: Int64

    /// The slot its reply fills, if a session waits for it.
    var slot: UInt64? {
        switch kind {
        case .command(let slot), .down(let slot, _): slot
        case .join(let slot, _, _): slot
        case .rejoin, .rewait, .cleanup: nil
        }
    }

    var isJoin: Bool {
        if case .join = kind { true } else { false }
    }

    /// How many times a JOIN (the session's own, or one sent for it) was sent again.
    var attempt: Int {
        switch kind {
        case .join(_, _, let attempt), .rejoin(let attempt): attempt
        case .command, .down, .rewait, .cleanup: 0
        }
    }

    /// Whether anyone waits for its answer: not for a rejoin, a rewait or a cleanup.
    var isSessions: Bool {
        switch kind {
        case .command, .down, .join: true
        case .rejoin, .rewait, .cleanup: false
        }
    }

    /// The session's own JOIN waiting again, from when the session sent it (or `now`).
    func parked(now: Int64) -> ParkedJoin {
        if case .join(let slot, let since, _) = kind { return ParkedJoin(format: format, id: id, since: since, slot: slot) }
        return ParkedJoin(format: format, id: id, since: now, slot: slot)
    }
}

/// A session's own JOIN that waits for a leader (none known, or the one it was sent to
/// went away): sent, with its form and id, to the next leader; refused
/// `ClusterSetup.joinWaitMs` after the session sent it (`since`).
struct ParkedJoin {
    var format: WireFormat
    var id: CommandID?
    var since: Int64
    /// The slot its reply fills in the connection's output (`ReplyOrder`).
    var slot: UInt64?
}

/// Where the reply of a relayed command goes: a session of another node.
struct RemoteRequester {
    var node: String
    var session: SessionID
    var format: WireFormat
    var id: CommandID?
    /// The term the sender addressed (`RelayPayload`).
    var term: Int64 = 0
    /// The command was a JOIN: a reply other than its snapshot tells the node it failed.
    var isJoin = false
    /// The run of the node's process that sent it, which the reply names.
    var incarnation: UInt64 = 0
    /// The command's `RelayCommand.serial`, echoed in the reply (0 for a hand-off later).
    var serial: UInt64 = 0
}

/// Where a local session waits in a queue group's line at another node's leader.
struct WaitingPlace: Equatable {
    var button: Int
    /// Its place when last told (its QUEUED answer): the leader, which alone knows who
    /// left ahead of it since, may be gone when the place is.
    var position: Int
    var name: String
    var key: String?
    /// The form its answers take (its QUEUED answer's).
    var format: WireFormat
    /// The serial of the DOWN last sent again for this place (`QueueWaits.rewait`): only
    /// that DOWN's answer settles it, not a late one meant for an earlier place.
    var resent: UInt64 = 0
}
