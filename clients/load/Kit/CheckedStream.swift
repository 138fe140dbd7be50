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
    /// The seq the next event must carry.
    var expected: Int64 = 0
    var lastEvent: WireMessage?
    var own: [Int32: OwnGrant] = [:]
    /// BUTTON lines of the snapshot being read: how many were not idle, and which
    /// buttons were pressed.
    var snapshotBusy = 0
    var snapshotPressed: [Int32] = []

    init(name: String) {
        self.name = name
    }
}
