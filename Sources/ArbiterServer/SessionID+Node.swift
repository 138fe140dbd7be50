import ArbiterCore

extension SessionID {
    /// How many session numbers each node has (cluster mode numbers a node's sessions from
    /// a range of its own, so that a relayed session keeps its number everywhere).
    package static let perNode = 1_000_000_000
}
