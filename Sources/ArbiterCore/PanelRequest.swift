/// A command addressed to one panel's core.
public enum PanelRequest: Sendable, Equatable {
    case join
    case leave
    case down(button: String)
    case up(button: String, fence: UInt64?)
    case cancel(button: String, fence: UInt64?)
    case reset
}
