/// Bounds on what a relay peer may make this node buffer. Both are checked before any
/// byte beyond them is kept.
public struct RelayLimits: Equatable, Sendable {
    /// The longest handshake line, newline included.
    public var maxHandshakeLineBytes: Int
    /// The largest frame, its 4-byte length prefix not counted.
    public var maxFrameBytes: Int

    public init(maxHandshakeLineBytes: Int = 512, maxFrameBytes: Int = 1 << 20) {
        self.maxHandshakeLineBytes = maxHandshakeLineBytes
        self.maxFrameBytes = maxFrameBytes
    }

    public static let standard = RelayLimits()
}
