/// How a connection was let in, decided once when it is accepted.
enum Admission: Sendable, Equatable {
    case served
    /// Past `maxConnections`: told so, then closed (monitoring is still answered).
    case overCapacity
    /// Past `maxConnections` and the monitoring reserve: nothing is served.
    case pastReserve
}
