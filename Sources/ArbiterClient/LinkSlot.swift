import Dispatch

/// The core's view of its current link. Guarded by the core's lock.
final class LinkSlot: @unchecked Sendable {
    let link: Link
    /// From `OK HELLO`; commands other than HELLO wait until it came.
    var session: String?
    var pending: [String: PendingRequest] = [:]
    var lastReceived = DispatchTime.now()
    var lastPing: DispatchTime?

    init(link: Link) {
        self.link = link
    }

    var ready: Bool { session != nil }
}
