/// What pressing a button means (PROTOCOL.md section 6).
public enum ButtonKind: String, Sendable, CaseIterable {
    /// The exclusive button: fires at touch-down, held until released.
    case tap
    /// The emergency button: fires once when held for `holdMs`.
    case hold
    /// Press-to-talk: a quick tap, or a talk that starts at `longMs` and stops at the release.
    case talk
}
