/// Where every module reads the time: `SystemClock` in production, `ManualClock` in
/// tests, so timeouts, deadlines and timers are tested without waiting. Passed in when
/// something is made, never read from a global, so a test can swap it.
///
/// Two readings, for two uses. `nanoseconds` never goes back: deadlines, timeouts and
/// everything the panels and the cluster decide by. `wallMilliseconds` is the calendar,
/// which may jump when the clock is set: only for records a person reads (journal and
/// history timestamps), never to decide.
///
/// A class protocol: `any TimeSource` is then a reference and a witness table, which a
/// struct holding it (`ClusterSetup`, inside `ServerConfiguration`) copies as plainly as
/// any field. A struct conformer made it an opaque box, and every read of one field of
/// the configuration on the press path copied the whole of it (+5.5 % per DOWN/UP in
/// bench/callgrind.sh).
public protocol TimeSource: AnyObject, Sendable {
    /// Nanoseconds from an origin that means nothing; only differences count.
    func nanoseconds() -> Int64
    /// Milliseconds since the Unix epoch.
    func wallMilliseconds() -> Int64
    /// This clock's `nanoseconds`, given the monotonic system clock's reading taken
    /// already (`real`): the event loop reads it for its own pacing anyway and must not
    /// read it twice per batch.
    func reading(givenMonotonic real: Int64) -> Int64
}

extension TimeSource {
    /// `nanoseconds` in whole milliseconds.
    @inlinable public func milliseconds() -> Int64 { nanoseconds() / 1_000_000 }

    @inlinable public func reading(givenMonotonic real: Int64) -> Int64 { nanoseconds() }
}
