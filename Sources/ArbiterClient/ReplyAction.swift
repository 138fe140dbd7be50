/// What the core does with a reply on the reader thread, under its lock, before the
/// waiting task runs: so that the events that follow the reply are read against the state
/// the reply made (a JOIN's snapshot, a DOWN's grant).
enum ReplyAction: Sendable {
    case none
    case hello
    /// `cause` nil: the first JOIN of the panel.
    case join(panel: String, cause: ResyncCause?)
    case down(panel: String, button: String)
    case release(panel: String, button: String)
    case history(panel: String, ended: [PanelTracker.Ended])
    case leave(panel: String)
}
