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
    /// C contenders loop DOWN/UP on the buttons of queue groups: a busy DOWN waits in
    /// line and is granted by hand-off.
    case queue
    /// Buzzer rounds: a host ARMs, N players press on ARMED, one wins, the rest are
    /// ranked; between rounds the host RESETs and presses early once.
    case buzz
    /// Prints a panel configuration for the other workloads and exits.
    case config
}
