import ArbiterCore

/// Everything the server is started with. Defaults are the documented ones.
public struct ServerConfiguration: Sendable {
    /// Address to bind; `0.0.0.0` serves a LAN. Default `127.0.0.1`.
    public var host = "127.0.0.1"
    /// TCP port; 0 picks a free one (tests). Default 7070.
    public var port: UInt16 = 7070
    /// The panels served. Default: the embedded `demo` panel.
    public var panels: [PanelConfig] = [.demo]
    /// Longest text line in bytes; the rest of a longer line is skipped. Default 4096.
    public var maxLineBytes = 4096
    /// Unsent output a peer may accumulate before it is disconnected. Default 1 MiB.
    public var maxOutboundBytes = 1 << 20
    /// How long a silent new connection waits before it is greeted as a line peer.
    /// Default 200 ms (PROTOCOL.md section 1).
    public var welcomeDelayMs: Int64 = 200
    /// Commands parsed but not yet run, per connection, before its reading pauses.
    public var maxQueuedCommands = 4096
    /// Reactor threads reading sockets. Default: one per core.
    public var reactorCount = 0
    /// Minimum level of log lines written to standard error.
    public var logLevel: LogLevel = .info

    public init() {}
}
