/// A command waiting for a link it may be sent on (and, for a panel's command, for the
/// panel to be in step on it).
struct LinkWaiter {
    let panel: String?
    /// The `down` this waiter carries, so that an `up` of its button can withdraw it.
    let ticket: Int?
    let continuation: CheckedContinuation<LinkSlot, any Error>
}
