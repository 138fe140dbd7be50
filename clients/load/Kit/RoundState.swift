/// A buzzer group's `state=` in a JOIN snapshot (`ROUND <p> <group> state=`).
public enum RoundState: UInt8, Sendable, Equatable {
    case unknown, closed, armed, won
}
