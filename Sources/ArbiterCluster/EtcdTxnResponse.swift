/// etcd's `TxnResponse`: which branch ran, the store's revision after it, and one result
/// per operation of that branch.
public struct EtcdTxnResponse: Equatable, Sendable {
    public var succeeded: Bool
    public var revision: Int64
    public var results: [EtcdOperationResult]

    public init(succeeded: Bool, revision: Int64, results: [EtcdOperationResult]) {
        self.succeeded = succeeded
        self.revision = revision
        self.results = results
    }

    /// The keys of the `index`-th result if it is a range, else none.
    public func rangeResult(_ index: Int) -> [EtcdKeyValue] {
        guard index < results.count, case .range(let kvs) = results[index] else { return [] }
        return kvs
    }
}
