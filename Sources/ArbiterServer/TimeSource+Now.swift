import ArbiterCore
import ArbiterIO

extension TimeSource {
    /// The monotonic reading as the `Instant` the panel cores and the connections decide by.
    package func now() -> Instant { Instant(nanoseconds: nanoseconds()) }
}
