/// What the checker knows about one connection's stream of messages.
struct CheckedStream {
    /// A grant this connection was given (its GRANTED reply), until its release.
    struct OwnGrant {
        var fence: Int64
        /// Its OK UP / OK CANCEL reply has been read.
        var releaseReplied = false
    }

    var name: String
    var session: Int64 = -1
    var joined = false
    /// The last thing read was this stream's snapshot (`OK JOIN`): a large panel's joiner
    /// reads its own JOINED, without seq, only then.
    var justJoined = false
    /// Still reading; closed streams no longer hold back the window.
    var active = true
    /// The seq the next event must carry.
    var expected: Int64 = 0
    var lastEvent: WireMessage?
    var own: [Int32: OwnGrant] = [:]
    /// BUTTON lines of the snapshot being read: how many were not idle, and which
    /// buttons were pressed.
    var snapshotBusy = 0
    /// The leader's term of this stream's last snapshot (0 outside cluster mode).
    var term: Int64 = 0
    /// A `RELEASED reason=failover` was read; the new term's snapshot must come next.
    var failedOver = false
    /// JOINs this connection sent whose snapshot has not come yet (`joinSent`).
    var joinsAwaited = 0
    /// Cluster mode: a snapshot it did not ask for (its node resynchronised it, or a new
    /// term began) moved it past events it never read, so what it has read no longer says
    /// which round a RANKED it reads now was decided in (`rankedReply`).
    var resynced = false
    var snapshotPressed: [Int32] = []
    /// The snapshot's buzzer rounds (ROUND) and their ranks (RANK), in its order.
    var snapshotRounds: [(group: Int32, state: RoundState)] = []
    var snapshotRanks: [(button: Int32, session: Int64, rank: Int32, afterUs: Int64)] = []

    init(name: String) {
        self.name = name
    }
}
