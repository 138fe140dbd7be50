/// Why an ownership ended; the `reason=` of RELEASED (PROTOCOL.md section 5).
public enum ReleaseReason: String, Sendable, CaseIterable {
    case up, cancel, timeout, disconnect, fired, reset, shutdown
}
