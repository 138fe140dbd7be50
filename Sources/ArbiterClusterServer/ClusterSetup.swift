import ArbiterServer
import ArbiterCluster
import ArbiterClusterRuntime
import ArbiterCore
import ArbiterIO

/// What a server in cluster mode is started with (`--cluster` and its flags). The etcd
/// clients are given, not made here, so tests run the same wiring on an in-memory etcd.
public struct ClusterSetup: ServerClusterSetup, @unchecked Sendable {
    /// This node's name (`--node`), unique in the cluster.
    public var node: String
    /// How other nodes and kiosks reach this node (`--advertise host:port`).
    public var advertise: String
    /// The shared secret (`--cluster-key`): relay handshakes and the config digest.
    public var key: [UInt8]
    public var timing: ClusterTiming
    public var keys: ClusterKeys
    /// Serves the start-up checks and the runtime's steps.
    public var control: any EtcdAPI
    /// Serves only the lease (grants and keepalives); a separate client, so the lease's
    /// choice of endpoint never waits behind a slow range.
    public var lease: any EtcdAPI
    /// Holds the watch on the panels' keys open (a third client); nil: no watch, changes
    /// are seen at the next step.
    public var watch: (any EtcdAPI)?
    /// Writes hooked panels' pending deliveries, from the panels' queues; nil: `control`.
    public var hooks: (any EtcdAPI)?
    /// The endpoints as the operator wrote them, for messages ("tried ...").
    public var endpointsDescription: String
    public var stepIntervalMilliseconds: Int
    /// The clock leadership is judged by: CLOCK_BOOTTIME unless a test passes another.
    public var clock: any TimeSource
    /// This run of the node's process, drawn at random when the setup is made: sent with
    /// every relayed command and `sessionGone`, so a leader tells this run's sessions from
    /// those of a process of the same node that died (`RelayIncarnations`).
    public var incarnation = UInt64.random(in: 1 ... .max)
    /// How long a relayed command may wait for its leader's answer before the panel
    /// resynchronises as after a dropped link (`FailoverBooks.checkAnswers`). An answer can be
    /// lost with no link of this node dropping: the leader wrote it to a link this node
    /// had already given up on. Default 5 s: past the links' silence timeout and a dial.
    public var answerTimeoutMs: Int64 = 5_000
    /// How long a leader keeps another node's members through that node's link drop, for
    /// the node to join them again (`LeaderDuties.remoteLinkLost`). Default 15 s: three answer
    /// deadlines, for re-joins sent over a link that dropped again.
    public var memberGraceMs: Int64 = 15_000
    /// How long a session's own JOIN waits for a leader that can answer it (none known, or
    /// one this node cannot reach) before it is answered `ERROR unavailable`
    /// (`MemberJoins.expireJoins`). It counts from the JOIN, through every re-send.
    public var joinWaitMs: Int64 = 10_000
    /// How long a connection's reply may be owed before it is given up
    /// (`Connection.giveUpOverdueReplies`): well past the longest wait the cluster
    /// allows itself (a relayed command's answer deadline, a JOIN's wait for a leader;
    /// a KICK waits 2 s).
    public var owedReplyLimitMs: Int64 { max(answerTimeoutMs, joinWaitMs) + 5_000 }

    /// Whether the node checks at start that `advertise` reaches its own port
    /// (`AdvertiseCheck`), refusing to start when it does not. `arbiter` turns it on unless
    /// `--no-advertise-check`; off here, for tests that advertise a placeholder.
    public var checksAdvertise = false
    /// What this node announces its relay understands (`ClusterFeatures`); tests play a
    /// node of an older version with none.
    public var features = ClusterFeatures.all
    /// Tests put an in-process relay here; nil: the socket transport.
    var relay: (any RelaySender)?

    public init(
        node: String, advertise: String, key: [UInt8], control: any EtcdAPI, lease: any EtcdAPI, endpointsDescription: String,
        watch: (any EtcdAPI)? = nil, timing: ClusterTiming = .standard, keys: ClusterKeys = ClusterKeys(), stepIntervalMilliseconds: Int = 100,
        clock: any TimeSource = SystemClock.boot
    ) {
        self.watch = watch
        self.node = node
        self.advertise = advertise
        self.key = key
        self.control = control
        self.lease = lease
        self.endpointsDescription = endpointsDescription
        self.timing = timing
        self.keys = keys
        self.stepIntervalMilliseconds = stepIntervalMilliseconds
        self.clock = clock
    }

    /// Where this node numbers its own sessions: `sessionBase + 1, + 2, ...`. Each node
    /// has its own range (from a hash of its name), so a session relayed to a panel's
    /// leader keeps the number its client was told in WELCOME, and cannot collide with
    /// the leader's own sessions or another node's.
    public var sessionBase: Int { ClusterSetup.sessionBase(ofNode: node) }

    public static let sessionsPerNode = SessionID.perNode

    public static func sessionBase(ofNode name: String) -> Int {
        // FNV-1a: stable across runs and machines (Swift's Hasher is seeded per process).
        // Over the contiguous bytes: a leader asks for every relayed command, and walking
        // `utf8` cost about 100 instructions more.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var name = name
        name.withUTF8 { bytes in
            for byte in bytes {
                hash ^= UInt64(byte)
                hash &*= 0x100_0000_01b3
            }
        }
        return Int(1 + hash % 999_999) * sessionsPerNode
    }

    /// The node whose range `session` is in, among `nodes`; nil if none.
    public static func owns(_ node: String, session: Int) -> Bool {
        let base = sessionBase(ofNode: node)
        return session > base && session < base + sessionsPerNode
    }

    package func makeCluster(log: ServerLog, idleSpinNs: Int64) -> any ServerCluster {
        ClusterContext(setup: self, log: log, idleSpinNs: idleSpinNs)
    }
}
