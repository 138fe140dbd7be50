/// Where a presser is in its press cycle.
enum PressStep: Equatable {
    /// No request outstanding and nothing scheduled.
    case idle
    /// DOWN (or SET NX, or PUBLISH) sent, reply awaited.
    case awaitingDown
    /// Granted; the UP is scheduled on a timer (holds).
    case holding
    /// UP (or DEL) sent, reply awaited.
    case awaitingUp
    /// Denied; the next DOWN is scheduled on a timer (holds).
    case thinking
    /// Rate-limited: the same DOWN, or the same UP, is sent again after a pause.
    case retryingDown
    case retryingUp
    /// queue: QUEUED; the GRANTED of the hand-off is awaited.
    case queued
    /// `--hosts`: a JOIN was answered `ERROR unavailable` (no leader reachable yet); the
    /// JOIN is sent again after a pause.
    case rejoining
}
