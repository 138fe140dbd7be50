/// What one generator connection does.
enum PeerRole: Equatable {
    /// Joins the panel and records its total order for the checker.
    case observer
    /// Presses buttons in a closed loop (Redis: takes and drops locks, or publishes).
    case presser
    /// fanout: joins and receives every event (Redis: subscribes).
    case member
    /// idle: connects, is greeted, and stays quiet.
    case idler
    /// buzz: opens and ends the rounds (ARM, RESET) and presses early between them.
    case host
    /// buzz: presses once per round, when it sees ARMED.
    case player

    var joins: Bool { self == .observer || self == .member || self == .host || self == .player }
}
