/// One key as etcd stores it. Revisions are etcd's global, Raft-committed counter, so
/// they never go back, even across etcd's own leader changes.
public struct EtcdKeyValue: Equatable, Sendable {
    public var key: [UInt8]
    public var value: [UInt8]
    /// The revision of the put that created this incarnation of the key; a key deleted and
    /// created again gets a new one. The election key's create revision is the term.
    public var createRevision: Int64
    public var modRevision: Int64
    public var version: Int64
    /// The lease the key is attached to, 0 for none.
    public var lease: Int64

    public init(key: [UInt8], value: [UInt8], createRevision: Int64, modRevision: Int64, version: Int64, lease: Int64) {
        self.key = key
        self.value = value
        self.createRevision = createRevision
        self.modRevision = modRevision
        self.version = version
        self.lease = lease
    }

    public var keyText: String { String(decoding: key, as: UTF8.self) }
    public var valueText: String { String(decoding: value, as: UTF8.self) }
}
