import ArbiterCore

/// What one engine measured; engines' stats are merged at the end.
public struct RunStats: Sendable {
    /// Request sent -> its reply read (DOWN, UP; SET, DEL; PUBLISH).
    public var reply = LatencyHistogram()
    /// DOWN sent by a presser -> PRESSED read by a member (Redis: PUBLISH -> message).
    public var event = LatencyHistogram()
    public var replies = 0
    public var grants = 0
    public var denials = 0
    /// Complete press cycles: granted, then released with an OK reply.
    public var cycles = 0
    public var errors = 0
    /// holds: UPs answered `ERROR stale-fence` because the hold had fired and another
    /// press had begun (expected, not an error).
    public var lateUps = 0
    /// Requests the server refused with `rate-limited` (its `--rate`); each is retried.
    public var rateLimited = 0
    /// `--hosts`: DOWNs answered `ERROR unavailable` (no leader for the panel yet), retried
    /// after a pause, and UPs whose grant a failover had already ended.
    public var unavailable = 0
    public var failoverUps = 0
    /// Events (or pub/sub messages) read by members and observers.
    public var events = 0
    /// queue: DOWNs that waited in line, and grants handed over to the head of a line.
    public var queued = 0
    public var handOffs = 0
    /// queue, `--hosts`: waits a failover ended (`DEQUEUED ... reason=failover`, no seq,
    /// to the waiter): the line went with the old leader; the presser pressed again.
    public var linesLost = 0
    /// buzz: rounds complete (a winner and every other player ranked), ranked presses,
    /// and early DOWNs the server denied (early or locked-out).
    public var rounds = 0
    public var ranked = 0
    public var earlyDenied = 0
    /// buzz: each player's DOWN, when it was written and its rank (`ArrivalOrder`).
    public var arrivals = ArrivalOrder()
    /// buzz, `--hosts`: rounds the host closed and opened again after `Engine.roundPatience`
    /// without a press: a player's press, or its event, went with a fault (a node paused
    /// through the round, a DOWN refused `unavailable` twice). One node: an error.
    public var abandonedRounds = 0
    /// The first rounds given up: which players had not pressed, and where they were.
    public var abandonSamples: [String] = []
    /// `--hosts`: connections that lost their node and connected to another.
    public var reconnects = 0
    /// A few error lines, for the report.
    public var errorSamples: [String] = []

    public init() {}

    mutating func error(_ text: String) {
        errors += 1
        if errorSamples.count < 5 { errorSamples.append(text) }
    }

    public mutating func merge(_ o: RunStats) {
        reply.merge(o.reply)
        event.merge(o.event)
        replies += o.replies
        grants += o.grants
        denials += o.denials
        cycles += o.cycles
        errors += o.errors
        lateUps += o.lateUps
        rateLimited += o.rateLimited
        unavailable += o.unavailable
        failoverUps += o.failoverUps
        linesLost += o.linesLost
        events += o.events
        queued += o.queued
        handOffs += o.handOffs
        rounds += o.rounds
        ranked += o.ranked
        earlyDenied += o.earlyDenied
        arrivals.merge(o.arrivals)
        abandonedRounds += o.abandonedRounds
        abandonSamples += o.abandonSamples.prefix(max(0, 5 - abandonSamples.count))
        reconnects += o.reconnects
        errorSamples += o.errorSamples.prefix(max(0, 5 - errorSamples.count))
    }
}
