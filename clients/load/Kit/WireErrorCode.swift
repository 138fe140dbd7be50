/// The `<code>` of an `ERROR` (or the `code` of a JSON error) the generator acts on.
public enum WireErrorCode: UInt8, Sendable, Equatable {
    case none
    /// The server's per-session rate limit (`--rate`): retry after a pause.
    case rateLimited
    /// UP/CANCEL with a fence that is not the current grant's.
    case staleFence
    /// UP/CANCEL by a session that does not hold the button.
    case notOwner
    /// Cluster mode: no leader can decide for the panel now (a failover, etcd without a
    /// majority); nothing was done.
    case unavailable
    /// The node is shutting down (SIGTERM): nothing was done, its goodbye and close follow.
    case shuttingDown
    case other

    static func decode(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> WireErrorCode {
        if ByteText.equals(bytes, range, "rate-limited") { return .rateLimited }
        if ByteText.equals(bytes, range, "stale-fence") { return .staleFence }
        if ByteText.equals(bytes, range, "not-owner") { return .notOwner }
        if ByteText.equals(bytes, range, "unavailable") { return .unavailable }
        if ByteText.equals(bytes, range, "shutting-down") { return .shuttingDown }
        return .other
    }
}
