/// The phases every engine of a run goes through together.
enum RunPhase: Int, Sendable {
    /// Connecting and greeting every peer.
    case connecting
    /// The workload runs (the first `warmup` seconds unmeasured).
    case running
    /// No new press starts; pressers finish what is in flight.
    case draining
    /// Members JOIN again; the snapshot's seq must be the last event they saw.
    case finalJoin
    case done
    /// A fatal error; every engine closes its connections and stops.
    case aborted
}
