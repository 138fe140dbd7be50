/// One connection the runner will create, before it is given to an engine.
struct PeerSpec {
    var role: PeerRole
    var joins: Bool
    /// Index of its panel in the run's panels.
    var panel = 0
    var fixedButton: Int32 = -1
    /// Its stream goes to its panel's safety checker.
    var checked = false
}
