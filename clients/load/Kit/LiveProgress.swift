/// One tick of the live progress line.
public struct LiveProgress: Sendable {
    public var elapsed: Double
    public var phase: String
    public var opsPerSecond: Double
    public var eventsPerSecond: Double
    /// p99 request->reply over the last tick, in nanoseconds.
    public var p99: UInt64
    public var errors: Int
    public var ready: Int
    public var total: Int
}
