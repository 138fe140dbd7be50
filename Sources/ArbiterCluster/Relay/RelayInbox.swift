/// A follower node's term fencing of what arrives on its relay links: one `RelayTermGate`
/// per panel, fed with terms learned from etcd (`leaderChanged`), never from the links.
/// A message of a term that is not the current one is dropped, so nothing a deposed or
/// paused leader still sends reaches a member after the new term began.
public struct RelayInbox: Sendable {
    public enum Verdict: Equatable, Sendable {
        /// Hand it to the panel's local members (or the session, for a reply).
        case deliver
        /// From a term that is not current; dropped.
        case stale
        /// A follower-to-leader message: not fenced here, the leader handles it.
        case toLeader
    }

    private var gates: [String: RelayTermGate] = [:]

    public init() {}

    public func currentTerm(of panel: String) -> Int64? {
        gates[panel]?.currentTerm
    }

    /// etcd says `panel`'s term is now `term` (nil: vacant). Returns the old term whose
    /// grants local members are owed `RELEASED ... reason=failover` (and then a fresh
    /// snapshot), if anything of it was delivered.
    public mutating func leaderChanged(panel: String, term: Int64?) -> Int64? {
        var gate = gates[panel] ?? RelayTermGate()
        let owed = gate.leaderChanged(to: term)
        gates[panel] = gate
        return owed
    }

    public mutating func receive(_ message: RelayMessage) -> Verdict {
        guard let (panel, term) = message.fencedTerm else { return .toLeader }
        // In place: one lookup, no copy written back, for every reply and event.
        return gates[panel, default: RelayTermGate()].admit(term: term) ? .deliver : .stale
    }
}
