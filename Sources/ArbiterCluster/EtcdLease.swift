/// A lease as etcd grants or renews it: its id and the TTL etcd actually gave, which may
/// be more than was asked (etcd has a minimum) and is what the safe deadline uses.
public struct EtcdLease: Equatable, Sendable {
    public var id: Int64
    public var ttlSeconds: Int64

    public init(id: Int64, ttlSeconds: Int64) {
        self.id = id
        self.ttlSeconds = ttlSeconds
    }
}
