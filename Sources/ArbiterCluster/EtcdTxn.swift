/// etcd's `TxnRequest`: if every compare holds, run `success`, else `failure`; atomically,
/// at one revision.
public struct EtcdTxn: Equatable, Sendable {
    public var compare: [EtcdCompare]
    public var success: [EtcdOperation]
    public var failure: [EtcdOperation]

    public init(compare: [EtcdCompare], success: [EtcdOperation], failure: [EtcdOperation] = []) {
        self.compare = compare
        self.success = success
        self.failure = failure
    }
}
