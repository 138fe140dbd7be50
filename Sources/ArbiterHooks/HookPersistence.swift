/// Where pending deliveries are kept so that they outlive the process that made them: the
/// file beside the journal on a single node (`HookStore`), etcd in a cluster, where the
/// next leader of the panel finishes them.
public protocol HookPersistence: AnyObject, Sendable {
    /// Records new deliveries of `panel`'s events decided in `term` (nil on a single node),
    /// before the events are broadcast. False if they could not be kept: the events are
    /// still sent and delivered, but a crash would lose them.
    @discardableResult
    func add(_ items: [(hook: String, url: String, delivery: HookDelivery)], panel: String, term: Int64?) -> Bool
    /// Records that a delivery is delivered or dropped.
    func done(hook: String, id: String)
}
