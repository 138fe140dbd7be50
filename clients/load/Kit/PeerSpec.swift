/// One connection the runner will create, before it is given to an engine.
struct PeerSpec {
    var role: PeerRole
    var joins: Bool
    var fixedButton: Int32 = -1
    /// Its stream goes to the safety checker.
    var checked = false
}
