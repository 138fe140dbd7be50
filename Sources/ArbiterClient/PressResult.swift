/// What the server answered a `DOWN`.
public enum PressResult: Sendable, Equatable, CustomStringConvertible {
    /// The button is yours; `fence` is above every fence handed out before on the panel.
    case granted(fence: UInt64)
    /// Someone else holds the group (`busy`, with `owner`), or `forbidden`, `queue-full`,
    /// `early`, `locked-out`: the server's reason as it writes it.
    case denied(reason: String, owner: String?)
    /// A `queue` group: you wait at `position`; the grant comes later as
    /// `PanelEvent.handedOff`.
    case queued(position: Int)
    /// A `buzzer` group: you were `rank`th, `afterMicroseconds` after the winner.
    case ranked(rank: Int, afterMicroseconds: UInt64)

    public var description: String {
        switch self {
        case .granted(let fence): "granted fence=\(fence)"
        case .denied(let reason, let owner): "denied reason=\(reason)" + (owner.map { " owner=\($0)" } ?? "")
        case .queued(let position): "queued position=\(position)"
        case .ranked(let rank, let after): "ranked rank=\(rank) after_us=\(after)"
        }
    }
}
