/// What other threads may do with a connection's output: the part of its life cycle
/// that appends and flushes (any thread, under the connection's lock) must see. In
/// ArbiterIO because it is about bytes and a descriptor, not about what they mean.
///
/// Only two places move it, each under the lock: the reactor, following its
/// `ConnectionStateMachine` (`appendLast` makes it `draining`, `close` makes it
/// `closed`), and the output budget's shedding (`discarding`), which may run anywhere.
package enum OutputGate: Sendable, Equatable {
    /// Output is accepted and written.
    case open
    /// The last words are queued: nothing more is accepted; close once written.
    case draining
    /// Cut by the output budget: pending output was dropped, nothing more is written,
    /// and a close is on its way to the reactor.
    case discarding
    /// The descriptor is closed.
    case closed

    @inlinable package var acceptsOutput: Bool {
        switch self {
        case .open: true
        case .draining, .discarding, .closed: false
        }
    }
}
