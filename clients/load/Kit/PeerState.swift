/// Where a connection is in its life.
enum PeerState: Equatable {
    case notStarted
    /// Non-blocking connect in flight.
    case connecting
    /// WebSocket: upgrade request sent, waiting for 101.
    case upgrading
    /// Waiting for the greeting and the HELLO (and JOIN) replies, or Redis's PONG.
    case greeting
    /// Set up; the workload runs.
    case ready
    /// Final JOIN sent at the end of the run, waiting for its snapshot.
    case finalJoin
    /// Final snapshot read; nothing more is expected.
    case finished
    case closed
}
