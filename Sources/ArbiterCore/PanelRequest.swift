/// A command addressed to one panel's core.
public enum PanelRequest: Sendable, Equatable {
    case join
    case leave
    /// DOWN, UP or CANCEL on a button of this panel, looked up by the server (its ids
    /// are looked up there, once, so the core's press path handles plain integers).
    case press(Press<Int>)
    /// A press naming a button this panel does not have: still the core's to answer,
    /// because a session without the press key is told that first.
    case unknownButton(Verb, id: String)
    case reset
    /// Opens a round of a buzzer group (admin).
    case arm(group: String)
    /// The whole ranking of a buzzer group's round (view).
    case ranking(group: String)
}
