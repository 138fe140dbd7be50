/// A DOWN of an open buzzer round that is read but not ranked yet: it waits until a
/// press that arrived before it can no longer be read after it (its arrival plus the
/// group's decision window), and its reply waits with it.
struct PendingPress: Sendable, Equatable {
    var button: Int
    var session: SessionID
    var name: String
    /// When its bytes arrived (the kernel's stamp, or the read time where none came):
    /// what it is ranked by.
    var arrival: Instant
    /// When its bytes were read: what its grant's timeout counts from, as any grant's.
    var readAt: Instant
    /// The order in which the core was given it: among equal arrivals, the rank.
    var order: UInt64
    /// Its session's later presses in the group, read while it waited: answered in
    /// order once it is ranked, as if it had been ranked at once.
    var followUps: [FollowUp] = []
    /// The session disconnected while it waited: it is still ranked by its arrival, but
    /// nobody is told its reply, and a win is released at once (`reason=disconnect`).
    var gone = false

    struct FollowUp: Sendable, Equatable {
        var verb: Verb
        var button: Int
        var fence: UInt64?
        var access: Access
        var readAt: Instant

        /// The command again, to be run once the press it waited behind is ranked.
        var request: PanelRequest {
            switch verb {
            case .down: .press(.down(panel: 0, button: button))
            case .up: .press(.up(panel: 0, button: button, fence: fence))
            default: .press(.cancel(panel: 0, button: button, fence: fence))
            }
        }
    }
}
