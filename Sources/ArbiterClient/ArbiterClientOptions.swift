import Foundation

/// How the client waits, pings and reconnects. The defaults suit a LAN and a cluster's
/// failovers; times are in seconds.
public struct ArbiterClientOptions: Sendable {
    /// One TCP connect, and the `HELLO` after it.
    public var connectTimeout: TimeInterval = 3
    /// How long a command waits for a connection before it throws `notConnected`. At least
    /// the longest the server itself makes a reply wait (15 s in cluster mode; a JOIN
    /// waits up to 10 s for a new leader).
    public var commandWait: TimeInterval = 15
    /// A link quiet this long gets a `PING`.
    public var pingAfter: TimeInterval = 2
    /// A link that brings nothing at all for this long is dead: closed and made again.
    /// A command the server may legitimately sit on (a JOIN during a failover) extends it.
    public var deadAfter: TimeInterval = 6
    /// The first reconnect waits up to this, each next one twice as long, up to
    /// `maxReconnectDelay`; each with random jitter, so that kiosks that lost one server
    /// do not all come back in the same millisecond.
    public var reconnectDelay: TimeInterval = 0.1
    public var maxReconnectDelay: TimeInterval = 5
    /// How long a command answered `ERROR unavailable` (nothing was done: a failover, a
    /// journal that cannot be written) is sent again before the error is thrown.
    public var unavailableRetry: TimeInterval = 10

    public init() {}
}
