/// What the generator does (`arbiter-load <workload>`).
public enum Workload: String, Sendable, CaseIterable {
    /// C clients loop DOWN/UP (Redis: SET NX PX / DEL) on B buttons.
    case contend
    /// A few pressers, N members receiving every event (Redis: PUBLISH to N SUBSCRIBErs).
    case fanout
    /// Hold and talk buttons pressed and released at random moments.
    case holds
    /// N connections opened and kept; the server's memory per connection.
    case idle
    /// Prints a panel configuration for the other workloads and exits.
    case config
}
