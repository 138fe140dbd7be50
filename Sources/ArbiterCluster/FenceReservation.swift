/// The transaction that reserves the next fence block for a panel:
///
///     if leader.create_revision == term and fence.mod_revision == <as read>
///     then put fence = <as read> + size      else range leader
///
/// The first compare is the term fence: a deposed leader's reservation fails. The second
/// makes it a compare-and-swap, so two reservations can never hand out one block twice.
/// A missing fence key reads as 0 with mod revision 0, etcd's rule for missing keys.
public struct FenceReservation: Equatable, Sendable {
    public var txn: EtcdTxn
    public var block: FenceBlock

    public init?(current: EtcdKeyValue?, term: Int64, leaderKey: String, fenceKey: String, size: UInt64) {
        let reserved: UInt64
        if let current {
            guard let value = UInt64(current.valueText) else { return nil }
            reserved = value
        } else {
            reserved = 0
        }
        let (last, overflow) = reserved.addingReportingOverflow(size)
        guard !overflow, size > 0 else { return nil }
        block = FenceBlock(term: term, first: reserved + 1, last: last)
        txn = EtcdTxn(
            compare: [.createRevision(leaderKey, .equal, term), .modRevision(fenceKey, .equal, current?.modRevision ?? 0)],
            success: [.put(fenceKey, String(last))],
            failure: [.range(leaderKey)])
    }
}
