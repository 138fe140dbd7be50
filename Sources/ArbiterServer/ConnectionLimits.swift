import ArbiterCore

/// The limits a connection's state machine decides by, copied from the configuration.
struct ConnectionLimits: Sendable {
    var maxLineBytes: Int
    var maxHTTPHeadBytes: Int
    var headTimeoutMs: Int64
    /// 0: a line peer may stay silent for ever.
    var idleTimeoutMs: Int64
    var webSocketPingIntervalMs: Int64
    var webSocketPongTimeoutMs: Int64
    /// Whether first bytes of `RELAY-` are handed to the relay (cluster mode) rather
    /// than served as a line peer.
    var acceptsRelays: Bool

    init(_ configuration: ServerConfiguration) {
        maxLineBytes = configuration.maxLineBytes
        maxHTTPHeadBytes = configuration.maxHTTPHeadBytes
        headTimeoutMs = configuration.headTimeoutMs
        idleTimeoutMs = configuration.idleTimeoutMs
        webSocketPingIntervalMs = configuration.webSocketPingIntervalMs
        webSocketPongTimeoutMs = configuration.webSocketPongTimeoutMs
        acceptsRelays = configuration.relayHandOff != nil
    }
}
