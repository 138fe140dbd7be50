/// etcd's `RangeResponse`: the keys found and the store's revision when it was read.
public struct EtcdRangeResponse: Equatable, Sendable {
    public var revision: Int64
    public var kvs: [EtcdKeyValue]

    public init(revision: Int64, kvs: [EtcdKeyValue]) {
        self.revision = revision
        self.kvs = kvs
    }
}
