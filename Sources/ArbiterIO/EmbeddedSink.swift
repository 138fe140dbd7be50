/// Where an embedded connection's output goes instead of a socket: the seam that lets
/// tests feed a connection bytes and read what it would have written (in the spirit of
/// swift-nio's `NIOEmbedded`). Production connections have none.
public final class EmbeddedSink: Sendable {
    private let written = Locked<[UInt8]>([])
    /// Called after each write, on the writer's thread: a test waits on it for output that
    /// other threads write (a cluster node's relayed replies), instead of polling.
    private let onWrite: (@Sendable () -> Void)?

    public init(onWrite: (@Sendable () -> Void)? = nil) {
        self.onWrite = onWrite
    }

    public func write(_ bytes: ArraySlice<UInt8>) {
        written.withLock { $0.append(contentsOf: bytes) }
        onWrite?()
    }

    /// Everything written since the last call.
    public func take() -> [UInt8] {
        written.withLock { w in
            defer { w = [] }
            return w
        }
    }
}
