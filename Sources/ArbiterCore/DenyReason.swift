/// The `reason=` of a `DENIED` that is neither busy nor forbidden.
public enum DenyReason: String, Sendable, CaseIterable {
    /// A `queue` group already has `max_queue` waiting.
    case queueFull = "queue-full"
    /// A `buzzer` group was pressed while no round was open.
    case early
    /// A `buzzer` group was pressed within `early_lockout_ms` of an early press.
    case lockedOut = "locked-out"
}
