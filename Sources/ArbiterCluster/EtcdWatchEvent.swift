/// One change seen by a watch. For a delete, `kv` carries only the key and the deleting
/// revision (as etcd sends it); `previous` is the key before the change when asked for.
public struct EtcdWatchEvent: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        case put
        case delete
    }

    public var kind: Kind
    public var kv: EtcdKeyValue
    public var previous: EtcdKeyValue?

    public init(kind: Kind, kv: EtcdKeyValue, previous: EtcdKeyValue? = nil) {
        self.kind = kind
        self.kv = kv
        self.previous = previous
    }
}
