/// Why a session left a queue without being granted; the `reason=` of DEQUEUED.
public enum DequeueReason: String, Sendable, CaseIterable {
    case up, cancel, disconnect, leave, reset, shutdown
}
