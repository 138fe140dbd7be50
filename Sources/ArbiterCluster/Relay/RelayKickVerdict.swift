/// What the node a session is on did with another node's `KICK` of it
/// (`RelayMessage.kickAnswer`).
public enum RelayKickVerdict: UInt8, Equatable, Sendable {
    /// The session is being closed, releasing what it owns.
    case kicked = 0
    /// No such session is connected there (any more).
    case noSuchSession = 1
    /// The admin's key is not the admin key of a panel the session joined or pressed in;
    /// the answer's detail names that panel.
    case forbidden = 2
}
