/// A panel the client joined: its tracker, the streams its events go to, and whether it
/// is in step on the current link. Guarded by the core's lock.
struct PanelSlot {
    var tracker: PanelTracker
    var streams: [Int: AsyncStream<PanelEvent>.Continuation] = [:]
    /// The link whose JOIN answered last; commands for the panel wait until it is the
    /// current one.
    var syncedLink: Int?
    /// A JOIN under way on this link.
    var joining: Int?
    /// Why the last JOIN failed, for commands that give up waiting.
    var lastError: ArbiterClientError?

    init(panel: String) {
        tracker = PanelTracker(panel: panel)
    }

    func yield(_ event: PanelEvent) {
        for stream in streams.values { stream.yield(event) }
    }
}
