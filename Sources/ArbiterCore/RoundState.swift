/// Where a `buzzer` group's round is.
public enum RoundState: String, Sendable {
    /// No round open: a press is early. The state at start and after RESET.
    case closed
    /// ARM opened a round and nobody has pressed yet.
    case armed
    /// Somebody won; later presses are ranked until RESET or the next ARM.
    case won
}
