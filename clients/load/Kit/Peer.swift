/// One generator connection and its protocol state. Owned by one `Engine` (its thread).
final class Peer {
    /// Global index; the connection calls itself `c<id>`.
    let id: Int
    /// Index in its engine's table (its epoll data).
    let slot: Int
    let role: PeerRole
    let transport: PeerTransport
    /// Index of its panel in the run's panels: it joins and presses only that one.
    var panel = 0
    /// Sends JOIN after HELLO (observers, members, and holds pressers, whose own
    /// stream the checker reads for reply order).
    var joins = false
    var fd: Int32 = -1
    /// Which of `LoadOptions.targets` it connects to; moves on when its node goes away.
    var target = 0
    /// Connects tried since it last became ready (bounded by the number of targets).
    var connectTries = 0
    /// It was ready once: a reconnection is not counted again as a peer getting ready.
    var wasReady = false
    var state: PeerState = .notStarted
    /// Unparsed bytes: a line, frame or reply not yet complete (or the HTTP head).
    var input: [UInt8] = []
    var output: [UInt8] = []
    var outputStart = 0
    /// Waiting for EPOLLOUT.
    var writeBlocked = false
    /// On the engine's flush list.
    var dirty = false
    var handshake: WebSocketClientHandshake?
    var ws: WebSocketClientCodec?
    /// The stream of this connection in its panel's checker, or -1.
    var stream = -1
    var session: Int64 = -1
    // The press cycle.
    var step: PressStep = .idle
    var button: Int32 = -1
    var fence: Int64 = -1
    var sentAt: UInt64 = 0
    /// Overlap check: a release (UP, DEL) is queued and is stamped when it is written;
    /// and the panel's highest fence read before the pending DOWN was queued.
    var releasePending = false
    /// buzz: a DOWN waits in `output` to be stamped at its write (`downWrittenAt`), and
    /// the ARMED events this player has seen (the round its press is for).
    var downPending = false
    var downWrittenAt: UInt64 = 0
    var armedSeen = 0
    var fenceFloor: Int64 = -1
    /// Cluster mode: the last DOWN was answered "may or may not have been done". If it was
    /// done, its retry is answered with that grant again (PROTOCOL.md: a DOWN on the
    /// button one owns is idempotent), whose fence is older than the floor.
    var downUndecided = false
    /// The grant `fence` ended on its own (a hold fired): this member saw its RELEASED.
    var grantEnded = false
    /// Bumped to invalidate a scheduled timer.
    var timerGeneration: UInt32 = 0
    /// fanout: the one button this presser uses (-1: choose at random).
    var fixedButton: Int32 = -1
    var random: SplitMix64
    /// buzz host: commands sent whose OK is not read yet.
    var pendingOKs = 0
    /// buzz host: when the open round last moved (its ARM, an event or an answer of it),
    /// and the players' answers to it counted so far (`PanelPlan.roundAnswers`).
    var roundMovedAt: UInt64 = 0
    var answersSeen = 0
    /// buzz player: the host's round number when it last pressed, and of its last answer
    /// counted; player and observer: the seq of the ARMED of the round it is in, or -1
    /// (pressed from a snapshot): with the session, it names a press (`PressTable`).
    var pressRound = -1
    /// buzz player: DOWNs sent whose answer has not come. Usually 0 or 1; in cluster mode
    /// a new term's snapshot sets the player idle while its DOWN may still be answered
    /// (decided in the next round the host opens), and it presses again meanwhile.
    var downsInFlight = 0
    var answeredRound = -1
    var roundSeq: Int64 = -1
    /// buzz player: its last reply, for the report of a round given up (`roundStalled`).
    var lastReply = WireMessage()
    var lastReplyAt: UInt64 = 0
    /// buzz player: the snapshot being read shows its group's round open, and whether it
    /// ranks this player already (`snapshotLine`).
    var snapshotRoundOpen = false
    var snapshotRanked = false
    /// buzz, `--hosts`: the term of the last snapshot read (`OK JOIN ... term=`).
    var term: Int64 = -1
    /// Redis: this connection's lock owner value, as a RESP bulk string.
    var ownerBulk: [UInt8] = []

    init(id: Int, slot: Int, role: PeerRole, transport: PeerTransport, seed: UInt64) {
        self.id = id
        self.slot = slot
        self.role = role
        self.transport = transport
        self.random = SplitMix64(seed: seed &+ UInt64(id) &* 0x9E37_79B9)
    }

    var name: String { "c\(id)" }
}
