/// Who leads a panel: the node named in the election key, the key's create revision as
/// the term, and the lease it lives under. A term is never reused, since revisions only
/// grow, so "same term" means "same reign".
public struct LeaderInfo: Equatable, Hashable, Sendable {
    public var node: String
    public var term: Int64
    public var lease: Int64

    public init(node: String, term: Int64, lease: Int64) {
        self.node = node
        self.term = term
        self.lease = lease
    }

    public init?(electionKey kv: EtcdKeyValue) {
        guard kv.createRevision > 0 else { return nil }
        self.init(node: kv.valueText, term: kv.createRevision, lease: kv.lease)
    }
}
