/// The codes of `ERROR <code> <message>` (PROTOCOL.md section 2).
public enum ErrorCode: String, Sendable, CaseIterable {
    case badSyntax = "bad-syntax"
    case unknownCommand = "unknown-command"
    case noSuchPanel = "no-such-panel"
    case noSuchButton = "no-such-button"
    case noSuchSession = "no-such-session"
    case notOwner = "not-owner"
    case staleFence = "stale-fence"
    case forbidden = "forbidden"
    case rateLimited = "rate-limited"
    case lineTooLong = "line-too-long"
    case badUTF8 = "bad-utf8"
    case serverFull = "server-full"
    case shuttingDown = "shutting-down"
    /// The press could not be made durable (the journal cannot be written) or the
    /// panel has no fence left; nothing was done. The message says when to retry.
    case unavailable = "unavailable"
    /// ARM names a group that is not a buzzer group of the panel.
    case noSuchGroup = "no-such-group"
}
