/// A group's policy as the JOIN snapshot's `policy=` names it.
public enum LoadGroupPolicy: String, Sendable, Equatable {
    case exclusive, queue, buzzer
}
