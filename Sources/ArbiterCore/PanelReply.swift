/// The reply to one panel command, kept apart from the events it causes.
public enum PanelReply: Sendable, Equatable {
    case granted(button: Int, fence: UInt64)
    /// `ownerSession` tells apart two sessions that go by one name.
    case deniedBusy(button: Int, owner: String, ownerSession: SessionID, active: Int)
    /// By id: a session that may not press is told so before whether the button exists,
    /// so a private panel's button ids cannot be guessed from the errors.
    case deniedForbidden(buttonID: String)
    /// `OK UP` / `OK CANCEL`; `ended` when the session's grant had already ended.
    case released(verb: ReleaseVerb, button: Int, ended: ReleaseReason?)
    case joined(PanelSnapshot)
    case left
    case reset
    case error(ErrorCode, String)
    /// A DOWN on a busy `queue` group: the session waits at `position` (1 = next).
    case queued(button: Int, position: Int, owner: String)
    /// A DOWN in a buzzer round somebody else already won.
    case ranked(button: Int, rank: Int, afterMicroseconds: Int64)
    case denied(button: Int, reason: DenyReason)
    /// `OK ARM <p> <group>`.
    case armed(group: String)
    /// `RANKING`'s answer: `ROUND`, a `RANK` per ranked press, `OK RANKING`. Indirect:
    /// every reply is copied on the press path, and this is the largest.
    indirect case ranking(group: String, round: RoundState, ranking: [Ranking])

    public enum ReleaseVerb: String, Sendable {
        case up = "UP"
        case cancel = "CANCEL"
    }
}
