/// What an `EventLoop` met that its owner should log and count; the loop carries on.
public enum LoopTrouble: Sendable, Equatable {
    /// `accept` failed (out of descriptors, most likely): accepts pause for 100 ms.
    case acceptFailed(errno: Int32)
    /// `epoll_ctl` refused a new socket, which is then closed.
    case registrationFailed(errno: Int32)
    /// The sweep found sockets ready while the loop's source had not run for half a
    /// second: a wake-up was missed below us. They are served now.
    case missedWakeup
}
