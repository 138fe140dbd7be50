/// What the relay transport has done, for /metrics and logs (`RelayNetwork.statistics`).
public struct RelayStatistics: Equatable, Sendable {
    /// Links up now (inbound and outbound).
    public var linksUp = 0
    /// Relay sockets open now, in a handshake, up, or closing.
    public var sockets = 0
    /// Links that came up, ever.
    public var linksOpened = 0
    /// Links that were up and went down.
    public var linksDown = 0
    /// Frames received and delivered to `onMessage`.
    public var framesIn = 0
    /// Frames written to a socket in full.
    public var framesOut = 0
    /// Of `framesOut`, those written in full by the sending thread itself, nothing being
    /// queued ahead of them (the rest went through the relay loop).
    public var framesWrittenDirectly = 0
    /// Inbound handshakes refused (wrong key, not a relay peer, too slow, too many).
    public var refusals = 0
    /// Dials that failed before their link was up.
    public var dialFailures = 0
    /// Messages dropped unsent: queued when their link went down or a dial failed, past
    /// the outbound bound, for an unusable address, or after `stop`.
    public var dropped = 0

    public init() {}
}
