import ArbiterCore

/// One message on a node-to-node relay link, after the handshake. A follower node sends
/// `command` and `sessionGone`; the leader of the panel sends `reply` and `event`; either
/// end sends `ping`.
/// Every leader-to-follower message of a panel carries its term, so the follower can drop
/// anything from a term that is no longer current (`RelayInbox`).
public enum RelayMessage: Equatable, Sendable {
    /// A local session's command for a panel the receiver leads. `command` is the command
    /// in its JSON form (PROTOCOL.md); `arrivedAt` is when the origin node read it, in
    /// milliseconds of the origin's monotonic clock. The leader does not time a command by
    /// it (two machines' monotonic clocks do not compare) but by when it read the frame.
    case command(RelayCommand)
    /// The leader's reply to one relayed session (the JSON line the session gets).
    /// `incarnation` is the run of the follower's process whose command it answers (or
    /// whose session waited in a line): another run of that node drops it, since its
    /// session of that number is someone else. `serial` is the answered command's
    /// (`RelayCommand.serial`); 0 for a reply no command waits for (a queue's hand-off).
    case reply(panel: String, term: Int64, session: UInt64, line: [UInt8], incarnation: UInt64 = 0, serial: UInt64 = 0)
    /// One panel event, sent once per follower node, which fans it out to its members.
    case event(panel: String, term: Int64, seq: UInt64, line: [UInt8])
    /// A relayed session disconnected: its grants end with `reason=disconnect`.
    /// `incarnation` and `lease` as in `RelayCommand`.
    case sessionGone(origin: String, session: UInt64, incarnation: UInt64 = 0, lease: Int64 = 0)
    /// Nothing but "this link still carries bytes": each end sends one when the link has
    /// been quiet, and closes a link it has heard nothing on for a while (`RelayLink`), so
    /// a peer cut off without a FIN or a reset is noticed in seconds, not minutes.
    case ping
    /// A follower asks the leader of `panel` for its state as `GET /api/panels` shows it,
    /// to answer that request on its own node (`id` is the follower's, echoed). Sent only
    /// to a node that registered the `panel-state` feature (`ClusterFeatures`): an older
    /// node closes a link on a frame type it does not know.
    case stateQuery(panel: String, id: UInt64)
    /// The leader's answer: the panel's JSON object of `GET /api/panels`, read in its
    /// queue in `term`. A node that does not lead the panel does not answer.
    case stateAnswer(panel: String, term: Int64, id: UInt64, state: [UInt8])
    /// An admin's `KICK` of `session`, sent to the node the session is on (its number says
    /// which, `ClusterSetup.owns`), only if that node announced `kick`. `key` is the key the
    /// admin's session presented: the receiver checks it as it would its own admin's;
    /// `by` is the admin's session, for the log; `id` is the asker's, echoed.
    case kick(id: UInt64, session: UInt64, key: String?, by: UInt64)
    /// The answer to a `kick`; `detail` names the panel of a `forbidden`.
    case kickAnswer(id: UInt64, session: UInt64, verdict: RelayKickVerdict, detail: String)
    /// The leader ended a relayed session's grant (`fence`, of `button`) for `reason`
    /// (timeout, fired, reset) and that session's node has no member of the panel, so no
    /// `RELEASED` event reaches it. The node needs it to answer the session's `UP` after a
    /// failover as the leader would have, `ended=<reason>`. Sent only to a node that
    /// announced `grant-ended` (`ClusterFeatures`); the fence names the grant, so a frame
    /// meant for an earlier run of that node matches nothing there.
    case grantEnded(panel: String, term: Int64, session: UInt64, button: String, fence: UInt64, reason: ReleaseReason)
    /// `event` with what a follower must know of each line as fields
    /// (`ClusterFeatures.typedEvents`): nothing rendered is parsed again. `seq` 0 is a
    /// failover notice, as for `event`.
    case typedEvent(panel: String, term: Int64, seq: UInt64, lines: [RelayEventLine])

    /// The panel and term of a leader-to-follower message, which receipt is fenced on.
    public var fencedTerm: (panel: String, term: Int64)? {
        switch self {
        case .reply(let panel, let term, _, _, _, _), .event(let panel, let term, _, _), .stateAnswer(let panel, let term, _, _),
            .grantEnded(let panel, let term, _, _, _, _), .typedEvent(let panel, let term, _, _):
            (panel, term)
        case .command, .sessionGone, .ping, .stateQuery, .kick, .kickAnswer:
            nil
        }
    }
}
