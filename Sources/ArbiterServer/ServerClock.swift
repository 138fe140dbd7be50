import ArbiterCore
import ArbiterIO

/// The clocks the server reads, passed in when it is made: the system's in production,
/// a `ManualClock` in tests, so timeouts and timers are tested without waiting.
public enum ServerClock: Sendable {
    case system
    case manual(ManualClock)

    /// The monotonic clock the panel cores and the connections decide by.
    package func now() -> Instant { Instant(nanoseconds: nanoseconds()) }

    package func nanoseconds() -> Int64 {
        switch self {
        case .system: Sys.monotonicNanoseconds()
        case .manual(let clock): clock.nanoseconds
        }
    }

    /// This clock's reading, given the system's one already taken (`real`): the reactor
    /// reads the system clock for its own pacing anyway and must not read it twice.
    @inline(__always) func reading(givenSystem real: Int64) -> Int64 {
        switch self {
        case .system: real
        case .manual(let clock): clock.nanoseconds
        }
    }

    /// Wall time for journal records, Unix milliseconds.
    func wallMilliseconds() -> Int64 {
        switch self {
        case .system: Sys.wallClockMilliseconds()
        case .manual(let clock): clock.wallMilliseconds
        }
    }
}
