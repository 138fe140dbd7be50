/// What other threads may do with a channel's output: the part of its life cycle that
/// appends and flushes (any thread, under the channel's lock) must see. In ArbiterIO
/// because it is about bytes and a descriptor, not about what they mean.
///
/// It moves only under the lock: `Channel.sealed` makes it `draining` with the last
/// output (the server's reactor, following its `ConnectionStateMachine`),
/// `EventLoop.close` and `detach` make it `closed`, and the output budget's shedding
/// makes it `discarding`, from any thread.
public enum OutputGate: Sendable, Equatable {
    /// Output is accepted and written.
    case open
    /// The last words are queued: nothing more is accepted; close once written.
    case draining
    /// Cut by the output budget, or holding output made under an epoch that ended
    /// (`Channel.FlushOutcome.stale`): pending output was dropped, nothing more is
    /// written, and a close is on its way to the reactor.
    case discarding
    /// The descriptor is closed.
    case closed

    @inlinable public var acceptsOutput: Bool {
        switch self {
        case .open: true
        case .draining, .discarding, .closed: false
        }
    }
}
