/// Where an embedded connection's output goes instead of a socket: the seam that lets
/// tests feed a connection bytes and read what it would have written (in the spirit of
/// swift-nio's `NIOEmbedded`). Production connections have none.
public final class EmbeddedSink: Sendable {
    private let written = Locked<[UInt8]>([])

    public init() {}

    public func write(_ bytes: ArraySlice<UInt8>) {
        written.withLock { $0.append(contentsOf: bytes) }
    }

    /// Everything written since the last call.
    public func take() -> [UInt8] {
        written.withLock { w in
            defer { w = [] }
            return w
        }
    }
}
