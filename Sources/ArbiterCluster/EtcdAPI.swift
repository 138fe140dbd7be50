/// The part of etcd v3 the cluster uses, as a seam: `InMemoryEtcd` for unit tests, the
/// HTTP/JSON gateway client (`ArbiterEtcd`) for real. Every call either answers or throws
/// within the implementation's timeout; none retries behind the caller's back, so the
/// caller's clock readings around a call bound when etcd acted on it.
public protocol EtcdAPI: AnyObject {
    func grantLease(ttlSeconds: Int64) throws(EtcdError) -> EtcdLease
    /// One keepalive. A lease that is gone throws `leaseNotFound`.
    func keepAlive(lease: Int64) throws(EtcdError) -> EtcdLease
    func revokeLease(_ id: Int64) throws(EtcdError)
    func range(_ keys: EtcdKeyRange) throws(EtcdError) -> EtcdRangeResponse
    func txn(_ txn: EtcdTxn) throws(EtcdError) -> EtcdTxnResponse
    /// Watches `keys` from `startRevision` (0: from now), with each event's previous value.
    func watch(_ keys: EtcdKeyRange, startRevision: Int64) throws(EtcdError) -> any EtcdWatchStream
}
