/// A relaying node's filter for one panel: it forwards the leader's events to local
/// members only while they carry the term it knows as current, so nothing a deposed or
/// paused leader still sends can reach a member after the new term began.
///
/// The term comes from the election key (a watch or range), never from the relayed
/// messages themselves: a stale leader cannot talk its way back in.
public struct RelayTermGate: Equatable, Sendable {
    public private(set) var currentTerm: Int64?
    /// Whether anything of the current term was delivered: then a term change owes the
    /// members `RELEASED ... reason=failover` for the old term's grants and a fresh snapshot.
    public private(set) var deliveredInTerm = false

    public init() {}

    /// The election key changed. Returns the term whose members are owed a failover, if any.
    public mutating func leaderChanged(to term: Int64?) -> Int64? {
        guard term != currentTerm else { return nil }
        let owed = deliveredInTerm ? currentTerm : nil
        currentTerm = term
        deliveredInTerm = false
        return owed
    }

    /// Whether a relayed message of `term` may be delivered.
    public mutating func admit(term: Int64) -> Bool {
        guard let currentTerm, term == currentTerm else { return false }
        deliveredInTerm = true
        return true
    }
}
